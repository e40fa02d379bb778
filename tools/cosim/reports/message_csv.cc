#include "tools/cosim/reports/message_csv.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <string>
#include <utility>

namespace nbox::cosim {
namespace {

// A CSV field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a quote or
// a line break.
std::string Field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

MessagesCsvWriter::MessagesCsvWriter(const ns3::NboxJobRecords& records, std::ostream& out)
    : records_(records), out_(out) {
  out_ << "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns\n";
}

void MessagesCsvWriter::Write(uint64_t id, const ns3::NboxMessageRecord& m) {
  const int64_t origin = records_.jobStart.GetNanoSeconds();
  const std::string group =
      m.comm < records_.communicatorNames.size() ? records_.communicatorNames[m.comm] : "world";
  fmt::print(out_, "{},{},{},{},{},{},{},{},{},{},", id, m.iteration, m.src, m.dst, Field(group),
             m.channel, m.bytes, Field(records_.messages.GetLabels()[m.label]),
             fmt::join(m.deps, " "), m.posted.GetNanoSeconds() - origin);
  if (m.isDelivered) out_ << m.delivered.GetNanoSeconds() - origin;
  out_ << '\n';
}

MessagesCsvStream::MessagesCsvStream(ns3::NboxJobRecords& records, StagedFile file)
    : records_(records), file_(std::move(file)), writer_(records, file_.stream()) {
  records_.messages.SetSink(
      [this](uint64_t id, const ns3::NboxMessageRecord& message) { writer_.Write(id, message); });
}

MessagesCsvStream::~MessagesCsvStream() {
  records_.messages.SetSink(nullptr);
}

void MessagesCsvStream::Finish() {
  records_.messages.Flush();
  file_.Close();
}

}  // namespace nbox::cosim
