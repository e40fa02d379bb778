// NCCL's matching rule on a connection, against hand-worked sequences of posts.
#include "bridge/server/message_matcher.h"

#include <gtest/gtest.h>

namespace nbox::bridge::server {
namespace {

Post Send(uint64_t connection, uint64_t request, uint64_t size, int tag, uint64_t vtime = 0) {
  Post post;
  post.kind = PostKind::kSend;
  post.rank = 0;
  post.peer = 1;
  post.connection = connection;
  post.request = request;
  post.size = size;
  post.tag = tag;
  post.vtime = vtime;
  return post;
}

Post Recv(uint64_t connection, uint64_t request, std::vector<wire::RecvSlot> slots,
          uint64_t vtime = 0) {
  Post post;
  post.kind = PostKind::kRecv;
  post.rank = 1;
  post.peer = 0;
  post.connection = connection;
  post.request = request;
  post.slots = std::move(slots);
  post.vtime = vtime;
  return post;
}

TEST(MessageMatcher, SendsMeetReceivesInPostingOrderWhicheverCameFirst) {
  MessageMatcher matcher;
  std::vector<MatchedMessage> matched;
  std::vector<MatchFailure> failed;
  matcher.Add(Send(1, 10, 4, 0, 100), &matched, &failed);
  matcher.Add(Send(1, 11, 5, 0, 110), &matched, &failed);
  EXPECT_TRUE(matched.empty());
  matcher.Add(Recv(1, 20, {{8, 0}}, 200), &matched, &failed);
  matcher.Add(Recv(1, 21, {{8, 0}}, 210), &matched, &failed);
  matcher.Add(Recv(1, 22, {{8, 0}}, 220), &matched, &failed);  // waits for a third send
  ASSERT_EQ(matched.size(), 2u);
  EXPECT_EQ(matched[0].send_request, 10u);
  EXPECT_EQ(matched[0].recv_request, 20u);
  EXPECT_EQ(matched[0].send_vtime, 100u);
  EXPECT_EQ(matched[0].recv_vtime, 200u);
  EXPECT_EQ(matched[1].send_request, 11u);
  EXPECT_EQ(matched[1].recv_request, 21u);
  EXPECT_EQ(matched[1].size, 5u);
  EXPECT_EQ(matcher.pending(), 1u);
  EXPECT_TRUE(failed.empty());
}

TEST(MessageMatcher, ConnectionsDoNotMix) {
  MessageMatcher matcher;
  std::vector<MatchedMessage> matched;
  std::vector<MatchFailure> failed;
  matcher.Add(Send(1, 10, 4, 0), &matched, &failed);
  matcher.Add(Recv(2, 20, {{8, 0}}), &matched, &failed);
  EXPECT_TRUE(matched.empty());
  EXPECT_EQ(matcher.pending(), 2u);
  matcher.ForgetConnection(1);
  EXPECT_EQ(matcher.pending(), 1u);
}

TEST(MessageMatcher, AGroupedReceiveTakesMessagesByTag) {
  MessageMatcher matcher;
  std::vector<MatchedMessage> matched;
  std::vector<MatchFailure> failed;
  matcher.Add(Recv(1, 20, {{8, 5}, {8, 7}}), &matched, &failed);
  matcher.Add(Send(1, 10, 3, 7), &matched, &failed);
  matcher.Add(Send(1, 11, 2, 5), &matched, &failed);
  ASSERT_EQ(matched.size(), 2u);
  EXPECT_EQ(matched[0].slot, 1u);
  EXPECT_EQ(matched[1].slot, 0u);
  EXPECT_EQ(matcher.pending(), 0u);
}

TEST(MessageMatcher, AnUnmatchedTagOrAnOversizedMessageFailsBothRequests) {
  MessageMatcher matcher;
  std::vector<MatchedMessage> matched;
  std::vector<MatchFailure> failed;
  matcher.Add(Recv(1, 20, {{8, 5}}), &matched, &failed);
  matcher.Add(Send(1, 10, 3, 6), &matched, &failed);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0].request, 10u);
  EXPECT_EQ(failed[1].request, 20u);
  EXPECT_EQ(failed[0].text, "a message with tag 6 matches no free buffer of the receive");
  failed.clear();
  matcher.Add(Recv(1, 21, {{8, 5}}), &matched, &failed);
  matcher.Add(Send(1, 11, 9, 5), &matched, &failed);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[1].text, "a message of 9 bytes is larger than the 8-byte receive buffer");
  EXPECT_TRUE(matched.empty());
  EXPECT_EQ(matcher.pending(), 0u);
}

}  // namespace
}  // namespace nbox::bridge::server
