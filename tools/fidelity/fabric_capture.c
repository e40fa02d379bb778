/* nbox_fabric_capture DEV OUT.csv: records when each IPv4 packet crosses the interface DEV of
 * the ground truth's shared link, until SIGTERM (netns_job.sh --capture-fabric runs it on x1,
 * the odd ranks' end of that link, inside its namespace).
 *
 * One line per packet: its kernel receive time on CLOCK_MONOTONIC (the clock of the bench's
 * --print-starts) in nanoseconds, its direction (`in`: released by x0's shaper, even to odd
 * ranks; `out`: released by x1's shaper, odd to even ranks) and its frame's bytes (Ethernet
 * header and IP packet, what HTB counts). Both directions are stamped when the shaper releases
 * the packet: a veth hands a packet to its peer at once, and a packet socket sees an outgoing
 * packet as the driver gets it, after the queue discipline.
 *
 * It prints "capturing on DEV" once its socket is bound, and exits 1 when the socket dropped
 * a packet (the file would leave the link idle where it
 * was not). Written in C: a Python reader of the same socket took one of the machine's two
 * cores and fell seconds behind a W = 16 job. fabric_summary.py reads the file. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kBatch = 64, kSnap = 64, kEthernetHeader = 14 };

typedef struct {
  int64_t monotonic_ns;
  uint16_t frame_bytes;
  uint8_t outgoing;
} Packet;

static volatile sig_atomic_t stopping = 0;
static void stop(int signal_number) {
  (void)signal_number;
  stopping = 1;
}

static int64_t now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Reads what the socket holds (waiting up to 200 ms for the first packet unless `drain`) and
 * appends the IPv4 packets. Returns how many messages it read, or -1 on an error. */
static int read_batch(int fd, int drain, int64_t realtime_minus_monotonic, Packet** packets,
                      size_t* count, size_t* capacity) {
  static unsigned char frames[kBatch][kSnap];
  static char controls[kBatch][CMSG_SPACE(sizeof(struct timespec))];
  struct mmsghdr messages[kBatch];
  struct iovec vectors[kBatch];
  struct sockaddr_ll addresses[kBatch];
  memset(messages, 0, sizeof(messages));
  for (int i = 0; i < kBatch; ++i) {
    vectors[i] = (struct iovec){frames[i], kSnap};
    messages[i].msg_hdr = (struct msghdr){.msg_name = &addresses[i],
                                          .msg_namelen = sizeof(addresses[i]),
                                          .msg_iov = &vectors[i],
                                          .msg_iovlen = 1,
                                          .msg_control = controls[i],
                                          .msg_controllen = sizeof(controls[i])};
  }
  if (!drain) {
    struct pollfd wait = {fd, POLLIN, 0};
    int ready = poll(&wait, 1, 200);
    if (ready == 0 || (ready < 0 && errno == EINTR)) return 0;
    if (ready < 0) return -1;
  }
  int got = recvmmsg(fd, messages, kBatch, MSG_DONTWAIT, NULL);
  if (got < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  for (int i = 0; i < got; ++i) {
    const unsigned char* frame = frames[i];
    if (messages[i].msg_len < 18 || frame[12] != 0x08 || frame[13] != 0x00) continue; /* IPv4 */
    struct cmsghdr* c = CMSG_FIRSTHDR(&messages[i].msg_hdr);
    if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec stamp;
    memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
    if (*count == *capacity) {
      *capacity = *capacity ? 2 * *capacity : 1 << 20;
      Packet* grown = realloc(*packets, *capacity * sizeof(Packet));
      if (grown == NULL) return -1;
      *packets = grown;
    }
    (*packets)[(*count)++] =
        (Packet){.monotonic_ns =
                     (int64_t)stamp.tv_sec * 1000000000 + stamp.tv_nsec - realtime_minus_monotonic,
                 .frame_bytes = (uint16_t)(kEthernetHeader + (frame[16] << 8 | frame[17])),
                 .outgoing = addresses[i].sll_pkttype == PACKET_OUTGOING};
  }
  return got;
}

/* Captures on `dev` until SIGTERM and writes the packets to `out`; returns 0, or 1 after
 * saying why on stderr. */
static int capture(const char* dev, FILE* out) {
  /* Protocol 0 until bound: a socket made for ETH_P_ALL takes every interface's packets until
   * bind() narrows it to one. */
  int fd = socket(AF_PACKET, SOCK_RAW, 0);
  int on = 1, buffer = 256 << 20; /* beyond net.core.rmem_max: root only */
  struct sockaddr_ll address = {.sll_family = AF_PACKET,
                                .sll_protocol = htons(ETH_P_ALL),
                                .sll_ifindex = (int)if_nametoindex(dev)};
  if (fd < 0 || address.sll_ifindex == 0 ||
      setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) != 0 ||
      bind(fd, (struct sockaddr*)&address, sizeof(address)) != 0) {
    fprintf(stderr, "nbox_fabric_capture: cannot capture on %s: %s\n", dev, strerror(errno));
    return 1;
  }
  /* netns_job.sh starts the ranks only once this line is out: no packet goes uncaptured. */
  printf("capturing on %s\n", dev);
  fflush(stdout);
  /* SO_TIMESTAMPNS stamps CLOCK_REALTIME; the bench prints CLOCK_MONOTONIC. */
  const int64_t realtime_minus_monotonic = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
  Packet* packets = NULL;
  size_t count = 0, capacity = 0;
  while (!stopping) {
    if (read_batch(fd, 0, realtime_minus_monotonic, &packets, &count, &capacity) < 0) {
      perror("nbox_fabric_capture: reading");
      return 1;
    }
  }
  int got;
  while ((got = read_batch(fd, 1, realtime_minus_monotonic, &packets, &count, &capacity)) > 0) {
  }
  struct tpacket_stats statistics;
  socklen_t size = sizeof(statistics);
  if (got < 0 || getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &statistics, &size) != 0) {
    perror("nbox_fabric_capture: draining");
    return 1;
  }
  if (statistics.tp_drops != 0) {
    fprintf(stderr, "nbox_fabric_capture: the socket dropped %u of %u packets\n",
            statistics.tp_drops, statistics.tp_packets);
    return 1;
  }
  fprintf(out, "monotonic_ns,direction,frame_bytes\n");
  for (size_t i = 0; i < count; ++i)
    fprintf(out, "%lld,%s,%u\n", (long long)packets[i].monotonic_ns,
            packets[i].outgoing ? "out" : "in", packets[i].frame_bytes);
  free(packets);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DEV OUT.csv\n", argv[0]);
    return 2;
  }
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  /* Opened first, so that a path it cannot write fails before the job runs. */
  FILE* out = fopen(argv[2], "w");
  if (out == NULL) {
    fprintf(stderr, "nbox_fabric_capture: cannot write %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  int status = capture(argv[1], out);
  if (fclose(out) != 0 && status == 0) {
    perror("nbox_fabric_capture: writing the output");
    status = 1;
  }
  if (status != 0) remove(argv[2]); /* no half-written capture */
  return status;
}
