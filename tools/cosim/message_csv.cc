#include "tools/cosim/message_csv.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

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

void WriteMessagesCsv(const ns3::NboxJobRecords& records, std::ostream& out) {
  const ns3::NboxMessageLog& log = records.messages;
  const auto& labels = log.GetLabels();
  const int64_t origin = records.jobStart.GetNanoSeconds();
  out << "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns\n";
  const auto& messages = log.GetMessages();
  for (size_t id = 0; id < messages.size(); ++id) {
    const ns3::NboxMessageRecord& m = messages[id];
    const std::string group =
        m.comm < records.communicatorNames.size() ? records.communicatorNames[m.comm] : "world";
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{},", id, m.iteration, m.src, m.dst, Field(group),
               m.channel, m.bytes, Field(labels[m.label]), fmt::join(m.deps, " "),
               m.posted.GetNanoSeconds() - origin);
    if (m.isDelivered) out << m.delivered.GetNanoSeconds() - origin;
    out << '\n';
  }
}

}  // namespace nbox::cosim
