// The messages in flight through the bridge server: the payload of every send until it is
// delivered, the buffers of every receive until all are filled, and the completions the
// simulator asked for but that must wait for a payload still on its way (a rank's Data frames
// may trail its PostSend by a while). Pure bookkeeping: frames go out through FrameSink.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/wire/messages.h"

namespace nbox::bridge::server {

// Queues an encoded frame for a rank.
using FrameSink = std::function<void(int rank, std::vector<uint8_t> frame)>;

class TransferStore {
 public:
  explicit TransferStore(FrameSink out) : out_(std::move(out)) {}

  void AddSend(int rank, uint64_t request, uint64_t size, bool payload_wanted);
  void AddRecv(int rank, uint64_t request, std::vector<wire::RecvSlot> slots);
  bool HasRequest(int rank, uint64_t request) const;

  // A Data frame of a send. Returns "" or what was wrong (unknown request, bytes out of order
  // or past the message): a protocol error of the rank.
  std::string AddPayload(int rank, uint64_t request, uint64_t offset, wire::ByteView bytes);

  // BridgeServer's methods of the same names.
  bool CompleteSend(int rank, uint64_t request, uint64_t delivery_vtime);
  bool DeliverFromSend(int recv_rank, uint64_t recv_request, uint32_t slot, int send_rank,
                       uint64_t send_request, uint64_t delivery_vtime);
  bool DeliverBytes(int recv_rank, uint64_t recv_request, uint32_t slot, std::vector<uint8_t> bytes,
                    uint64_t delivery_vtime);
  bool DeliverSynthetic(int recv_rank, uint64_t recv_request, uint32_t slot, uint64_t size,
                        uint64_t delivery_vtime);

  // Drops a request (its comm was closed or failed); a receive it was to fill is left unfilled.
  // With `keep_in_flight` a send whose payload is in and that is not delivered yet stays: the
  // message is in the network, and its receiver may post the receive only after the sender
  // closed the comm or left (a sender whose last send completed, then ended its job).
  void Forget(int rank, uint64_t request, bool keep_in_flight = false);
  // Forget for every request of a rank whose session ended (keeping messages in flight when
  // it said Goodbye).
  void ForgetRank(int rank, bool keep_in_flight = false);

  uint64_t held_payload_bytes() const { return held_bytes_; }
  // A completion of `rank` the simulator asked for waits for a payload still on its way (a
  // send's own, or the sender's of a message for one of its receives): its Complete is not
  // sent yet.
  bool CompletionWaiting(int rank) const;

 private:
  using Key = std::pair<int, uint64_t>;  // (rank, request)

  struct PendingDelivery {
    Key recv;
    uint32_t slot;
    uint64_t vtime;
  };
  struct SendRecord {
    uint64_t size = 0;
    bool payload_wanted = true;
    std::vector<uint8_t> payload;
    uint64_t received = 0;
    std::optional<uint64_t> complete_vtime;  // asked, not yet sent
    bool completed = false;
    std::optional<PendingDelivery> delivery;  // asked, not yet done
    bool delivered = false;
    bool PayloadIn() const { return !payload_wanted || received == size; }
  };
  struct Fill {
    bool reserved = false;  // a delivery is waiting for its payload
    bool filled = false;
    bool synthetic = false;  // no bytes: the rank fills the buffer itself
    uint64_t size = 0;
    std::vector<uint8_t> bytes;  // `size` bytes unless synthetic
    uint64_t vtime = 0;
  };
  struct RecvRecord {
    std::vector<wire::RecvSlot> slots;
    std::vector<Fill> fills;
    int filled = 0;
  };

  // The receive (nullptr when gone) if `size` bytes, synthetic or not, may fill `slot`; throws
  // std::invalid_argument when they may not.
  RecvRecord* CheckSlot(const Key& recv, uint32_t slot, uint64_t size, bool synthetic);
  void FillSlot(const Key& recv, uint32_t slot, std::vector<uint8_t> bytes, uint64_t vtime);
  void FillSyntheticSlot(const Key& recv, uint32_t slot, uint64_t size, uint64_t vtime);
  // Sends the Complete (and the bytes) once every buffer of the receive is filled.
  void FinishIfFilled(const Key& recv);
  // Does what a send waited for once its payload is in; erases it when nothing is left.
  void Settle(const Key& send);

  FrameSink out_;
  std::map<Key, SendRecord> sends_;
  std::map<Key, RecvRecord> recvs_;
  uint64_t held_bytes_ = 0;
};

}  // namespace nbox::bridge::server
