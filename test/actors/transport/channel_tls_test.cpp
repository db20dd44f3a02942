// Tests for the tensor channel's handshake (actors/transport/channel_tls.hpp): members of one
// cluster agree on mirrored keys; a stranger (another CA, no TLS, silence) gets no keys, and
// each end says why.
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "status_checks.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/transport/channel_tls.hpp"

namespace troupe {
namespace {

using testing::TlsCredentials;
constexpr auto kTimeout = std::chrono::milliseconds(5000);

struct Handshakes {
  StatusOr<ChannelTls::Keys> connector = errors::Unknown("not run");
  StatusOr<ChannelTls::Keys> acceptor = errors::Unknown("not run");
};

// Both ends' handshakes on a socket pair, at the same time.
Handshakes shake(const ChannelTls& connector, const ChannelTls& acceptor) {
  int fds[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  auto accepted = std::async(std::launch::async, [&] {
    auto keys = acceptor.handshake(fds[1], ChannelTls::Role::kAcceptor, kTimeout, "the connector");
    if (!keys.ok()) ::shutdown(fds[1], SHUT_RDWR);  // as the channel closes it
    return keys;
  });
  Handshakes out;
  out.connector = connector.handshake(fds[0], ChannelTls::Role::kConnector, kTimeout, "acceptor");
  out.acceptor = accepted.get();
  ::close(fds[0]);
  ::close(fds[1]);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(channel_tls)

BOOST_AUTO_TEST_CASE(members_agree_on_mirrored_keys_new_for_every_connection) {
  TlsCredentials creds;
  creds.make_ca("ca");
  auto ps = value_or_throw(ChannelTls::create(creds.make_certificate("ps", "ca")));
  auto worker = value_or_throw(ChannelTls::create(creds.make_certificate("worker", "ca")));
  Handshakes first = shake(*worker, *ps);
  BOOST_REQUIRE_MESSAGE(first.connector.status().ok(), first.connector.status().to_string());
  BOOST_REQUIRE_MESSAGE(first.acceptor.status().ok(), first.acceptor.status().to_string());
  BOOST_TEST((first.connector->send.key == first.acceptor->receive.key));
  BOOST_TEST((first.connector->send.iv == first.acceptor->receive.iv));
  BOOST_TEST((first.connector->receive.key == first.acceptor->send.key));
  BOOST_TEST((first.connector->send.key != first.connector->receive.key));
  Handshakes second = shake(*worker, *ps);
  BOOST_REQUIRE_MESSAGE(second.connector.status().ok(), second.connector.status().to_string());
  BOOST_TEST((second.connector->send.key != first.connector->send.key));
}

BOOST_AUTO_TEST_CASE(a_certificate_of_another_ca_gets_no_keys_on_either_side) {
  TlsCredentials creds;
  creds.make_ca("ca");
  creds.make_ca("other_ca");
  auto member = value_or_throw(ChannelTls::create(creds.make_certificate("member", "ca")));
  auto stranger =
      value_or_throw(ChannelTls::create(creds.make_certificate("stranger", "other_ca")));
  Handshakes in = shake(*stranger, *member);
  testing::check_error(in.acceptor.status(), Code::kUnavailable,
                       "tensor channel: TLS handshake from the connector failed");
  BOOST_TEST(!in.connector.ok());
  Handshakes out = shake(*member, *stranger);
  testing::check_error(out.connector.status(), Code::kUnavailable,
                       "tensor channel: TLS handshake to acceptor failed");
  BOOST_TEST(!out.acceptor.ok());
}

BOOST_AUTO_TEST_CASE(a_silent_peer_is_given_up_on_at_the_deadline) {
  TlsCredentials creds;
  creds.make_ca("ca");
  auto member = value_or_throw(ChannelTls::create(creds.make_certificate("member", "ca")));
  int fds[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  auto began = std::chrono::steady_clock::now();
  auto keys = member->handshake(fds[1], ChannelTls::Role::kAcceptor, std::chrono::milliseconds(300),
                                "a silent peer");
  auto took = std::chrono::steady_clock::now() - began;
  testing::check_error(keys.status(), Code::kDeadlineExceeded,
                       "tensor channel: TLS handshake from a silent peer did not finish within "
                       "300 ms");
  BOOST_TEST(took < std::chrono::seconds(3));
  ::close(fds[0]);
  ::close(fds[1]);
}

BOOST_AUTO_TEST_CASE(credentials_that_cannot_be_used_are_refused_naming_the_file) {
  TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions options = creds.make_certificate("member", "ca");
  options.key_file = creds.path("missing.key");
  testing::check_error(ChannelTls::create(options).status(), Code::kInvalidArgument, "missing.key");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
