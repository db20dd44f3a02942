// probe_handshake (actors/transport/handshake_probe.hpp): each way a handshake can end is told
// apart, so that errors name the cause and only a busy server is tried again.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <openssl/ssl.h>

#include "status_checks.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/transport/handshake_probe.hpp"
#include "troupe/graph/cluster/host_port.hpp"

namespace troupe {
namespace {

using Verdict = HandshakeProbe::Verdict;
constexpr auto kProbeTimeout = std::chrono::milliseconds(3000);

// A server of one task in a runtime of its own, with `tls` (none: plaintext).
struct OneServer {
  explicit OneServer(const TlsOptions& tls) {
    RuntimeOptions runtime_options;
    runtime_options.tls = tls;
    ServerOptions options;
    options.runtime = value_or_throw(Runtime::create(runtime_options));
    server = value_or_throw(Server::create(ServerDef::local(), options));
    port = static_cast<uint16_t>(value_or_throw(parse_host_port(server->address())).second);
  }
  std::unique_ptr<Server> server;
  uint16_t port = 0;
};

// A listening socket on 127.0.0.1 whose one accepted connection `serve` is handed.
class OneShotListener {
 public:
  template <class Serve>
  explicit OneShotListener(Serve serve) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    BOOST_REQUIRE(::listen(fd_, 4) == 0);
    socklen_t len = sizeof addr;
    BOOST_REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, serve] {
      int connection = ::accept(fd_, nullptr, nullptr);
      if (connection < 0) return;
      serve(connection);
      ::close(connection);
    });
  }
  ~OneShotListener() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  uint16_t port() const { return port_; }

 private:
  int fd_;
  uint16_t port_ = 0;
  std::thread thread_;
};

struct Credentials {
  Credentials() {
    creds.make_ca("ca");
    creds.make_ca("other_ca");
    node = creds.make_certificate("node", "ca");
    member = creds.make_certificate("member", "ca");
    stranger = creds.make_certificate("stranger", "other_ca");
  }
  testing::TlsCredentials creds;
  TlsOptions node, member, stranger;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(handshake_probe)

BOOST_AUTO_TEST_CASE(a_member_is_accepted_by_a_tls_node) {
  Credentials c;
  OneServer node(c.node);
  HandshakeProbe probe = probe_handshake(c.member, "127.0.0.1", node.port, kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kAccepted), probe.explanation());
  BOOST_TEST(probe.retry_may_help());
}

BOOST_AUTO_TEST_CASE(a_server_certificate_from_another_ca_is_refused_here) {
  Credentials c;
  OneServer node(c.node);
  HandshakeProbe probe = probe_handshake(c.stranger, "127.0.0.1", node.port, kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kRefusedTheirCertificate), probe.explanation());
  BOOST_TEST(!probe.retry_may_help());
  BOOST_TEST(probe.explanation().find("this process uses TLS, and refused the server's "
                                      "certificate") != std::string::npos,
             probe.explanation());
}

// A server that trusts another CA refuses this process's certificate with an alert.
BOOST_AUTO_TEST_CASE(a_server_refusing_this_certificate_is_told_by_its_alert) {
  Credentials c;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_server_method()),
                                                            SSL_CTX_free);
  BOOST_REQUIRE(SSL_CTX_use_certificate_file(context.get(), c.node.certificate_file.c_str(),
                                             SSL_FILETYPE_PEM) == 1);
  BOOST_REQUIRE(
      SSL_CTX_use_PrivateKey_file(context.get(), c.node.key_file.c_str(), SSL_FILETYPE_PEM) == 1);
  BOOST_REQUIRE(SSL_CTX_load_verify_locations(context.get(), c.stranger.ca_file.c_str(), nullptr) ==
                1);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  OneShotListener server([&](int fd) {
    SSL* ssl = SSL_new(context.get());
    SSL_set_fd(ssl, fd);
    SSL_accept(ssl);  // fails, sending the alert
    SSL_free(ssl);
  });
  HandshakeProbe probe = probe_handshake(c.member, "127.0.0.1", server.port(), kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kRefusedOurCertificate), probe.explanation());
  BOOST_TEST(!probe.retry_may_help());
  BOOST_TEST(probe.explanation().find("the server refused its certificate") != std::string::npos,
             probe.explanation());
}

// What the accept gate does to make room: the connection is shut down, no alert.
BOOST_AUTO_TEST_CASE(a_connection_shut_down_without_an_alert_may_be_tried_again) {
  Credentials c;
  for (const TlsOptions& tls : {c.member, TlsOptions{}}) {
    OneShotListener server([](int fd) { ::shutdown(fd, SHUT_RDWR); });
    HandshakeProbe probe = probe_handshake(tls, "127.0.0.1", server.port(), kProbeTimeout);
    BOOST_TEST((probe.verdict == Verdict::kClosedWithoutAlert), probe.explanation());
    BOOST_TEST(probe.retry_may_help());
    BOOST_TEST(probe.explanation().find("its admission caps may be full") != std::string::npos,
               probe.explanation());
  }
}

BOOST_AUTO_TEST_CASE(tls_on_one_side_only_is_a_protocol_mismatch) {
  Credentials c;
  OneServer plain(TlsOptions{});
  HandshakeProbe probe = probe_handshake(c.member, "127.0.0.1", plain.port, kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kProtocolMismatch), probe.explanation());
  BOOST_TEST(probe.explanation().find("the server does not use TLS, and this process does") !=
                 std::string::npos,
             probe.explanation());
  BOOST_TEST(!probe.retry_may_help());

  OneServer secure(c.node);
  probe = probe_handshake(TlsOptions{}, "127.0.0.1", secure.port, std::chrono::milliseconds(500));
  BOOST_TEST((probe.verdict == Verdict::kProtocolMismatch), probe.explanation());
  BOOST_TEST(probe.explanation().find("this process does not use TLS") != std::string::npos,
             probe.explanation());
  BOOST_TEST(!probe.retry_may_help());

  probe = probe_handshake(TlsOptions{}, "127.0.0.1", plain.port, kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kAccepted), probe.explanation());
}

BOOST_AUTO_TEST_CASE(nothing_listening_is_unreachable) {
  uint16_t port = 0;
  {
    OneShotListener gone([](int) {});
    port = gone.port();
  }
  HandshakeProbe probe = probe_handshake(TlsOptions{}, "127.0.0.1", port, kProbeTimeout);
  BOOST_TEST((probe.verdict == Verdict::kUnreachable), probe.explanation());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
