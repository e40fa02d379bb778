// messages.csv (output.messages = csv): every point-to-point message of a simulated run, one
// row each, from the job's message log (ns3-module/model/runtime/nbox-message-log.h says what a
// dependency is). The columns are documented in docs/TRACES.md, "Traffic out".
#pragma once

#include <cstdint>
#include <ostream>

#include "ns3/nbox-job-records.h"
#include "tools/cosim/output/output_folder.h"

namespace nbox::cosim {

// Writes "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns" and then one
// row per message, as the message log hands them on (NboxMessageLog::SetSink: posting order,
// while the run goes on); times in ns from the job's start, deps space-separated ids, a message
// never delivered (a run stopped early) with an empty delivered_ns.
class MessagesCsvWriter {
 public:
  // Writes the header. `records` must outlive the writer: rows read its labels, communicator
  // names and job start.
  MessagesCsvWriter(const ns3::NboxJobRecords& records, std::ostream& out);
  void Write(uint64_t id, const ns3::NboxMessageRecord& message);

 private:
  const ns3::NboxJobRecords& records_;
  std::ostream& out_;
};

// messages.csv written while the run goes on: the writer is the job's message log's sink, so
// the log holds only the messages from the oldest one in flight on, not the whole run.
class MessagesCsvStream {
 public:
  MessagesCsvStream(ns3::NboxJobRecords& records, StagedFile file);
  ~MessagesCsvStream();  // detaches from the log
  MessagesCsvStream(const MessagesCsvStream&) = delete;
  MessagesCsvStream& operator=(const MessagesCsvStream&) = delete;

  // Writes the messages still held (in flight when a run stopped early) and closes the file;
  // throws std::runtime_error naming it if a write failed.
  void Finish();

 private:
  ns3::NboxJobRecords& records_;
  StagedFile file_;
  MessagesCsvWriter writer_;
};

}  // namespace nbox::cosim
