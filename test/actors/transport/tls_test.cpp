// TLS between runtimes (actors/transport/tls.hpp, actors/transport/middleman.hpp): credentials are
// checked before use, peers with the cluster's credentials work both ways, and a process without
// them (or with another CA's) is refused while the server keeps serving.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <openssl/ssl.h>

#include "status_checks.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using testing::TlsCredentials;

void check_ok(const Status& status) {
  BOOST_TEST(status.ok(), status.to_string());
}

std::shared_ptr<Runtime> runtime_with(const TlsOptions& tls) {
  RuntimeOptions options;
  options.tls = tls;
  return value_or_throw(Runtime::create(options));
}

// A step on `device` of the server at `target`, through `runtime`.
Status run_step_on(const std::string& target, const std::string& device,
                   std::shared_ptr<Runtime> runtime, int64_t* result,
                   std::optional<SessionConfig> config = std::nullopt) {
  try {
    Scope root = Scope::new_root();
    auto sum = ops::Add(root.with_device(device), ops::Const(root, int64_t{40}), int64_t{2});
    Session session = value_or_throw(Session::create(target, config, std::move(runtime)));
    *result = value_or_throw(session.run(sum)).scalar<int64_t>();
    return Status::OK();
  } catch (const StatusError& e) {
    return e.status();
  }
}

// A ps and a worker task, each in its own runtime (so they talk over loopback, not in-process).
struct TwoTasks {
  explicit TwoTasks(const TlsOptions& ps_tls, const TlsOptions& worker_tls) {
    ClusterSpec cluster = value_or_throw(make_ps_worker_cluster(1, 1, true));
    for (auto [job, tls] : {std::pair{"ps", &ps_tls}, std::pair{"worker", &worker_tls}}) {
      ServerOptions options;
      options.runtime = runtime_with(*tls);
      options.peers.connect_timeout = std::chrono::seconds(5);
      runtimes.push_back(options.runtime);
      ServerDef def = value_or_throw(ServerDef::create(cluster, job, 0));
      servers.push_back(value_or_throw(Server::create(def, options)));
    }
  }
  std::vector<std::shared_ptr<Runtime>> runtimes;  // ps, worker
  std::vector<std::unique_ptr<Server>> servers;    // ps, worker
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tls)

BOOST_AUTO_TEST_CASE(credentials_are_checked_before_use) {
  TlsCredentials creds;
  creds.make_ca("ca");
  creds.make_ca("other_ca");
  TlsOptions good = creds.make_certificate("node", "ca");
  creds.make_certificate("stranger", "other_ca");
  check_ok(good.validate());
  BOOST_TEST(!TlsOptions{}.enabled());
  check_ok(TlsOptions{}.validate());  // off

  TlsOptions no_ca = good;
  no_ca.ca_file.clear();
  testing::check_error(no_ca.validate(), Code::kInvalidArgument, "ca_file is missing");

  TlsOptions missing = good;
  missing.certificate_file = creds.path("nope.pem");
  testing::check_error(missing.validate({"--tls_cert", "--tls_key", "--tls_ca"}),
                       Code::kInvalidArgument, "--tls_cert '" + creds.path("nope.pem") + "'");

  TlsOptions wrong_key = good;
  wrong_key.key_file = creds.path("stranger.key");
  testing::check_error(wrong_key.validate(), Code::kInvalidArgument, "is not the key of");

  TlsOptions key_as_certificate = good;
  key_as_certificate.certificate_file = good.key_file;
  testing::check_error(key_as_certificate.validate(), Code::kInvalidArgument,
                       "is not a readable PEM certificate");

  TlsOptions other_ca = creds.options("stranger", "ca");
  testing::check_error(other_ca.validate(), Code::kInvalidArgument, "is not signed by the CA");

  creds.run("openssl ec -in node.key -aes256 -passout pass:secret -out locked.key");
  TlsOptions locked = good;
  locked.key_file = creds.path("locked.key");
  testing::check_error(locked.validate(), Code::kInvalidArgument, "needs its passphrase");
  locked.key_passphrase = "secret";
  check_ok(locked.validate());

  BOOST_CHECK_THROW(runtime_with(wrong_key), StatusError);
}

BOOST_AUTO_TEST_CASE(a_tls_client_is_told_when_the_server_does_not_use_tls) {
  TlsCredentials creds;
  creds.make_ca("ca");
  ServerOptions options;
  options.runtime = value_or_throw(Runtime::create());  // plaintext
  auto server = value_or_throw(Server::create(ServerDef::local(), options));
  int64_t result = 0;
  auto member = runtime_with(creds.make_certificate("client", "ca"));
  testing::check_error(run_step_on(server->target(), "/job:localhost/task:0", member, &result),
                       Code::kUnavailable, "the server does not use TLS, and this process does");
}

BOOST_AUTO_TEST_CASE(an_expired_certificate_is_reported_as_expired) {
  TlsCredentials creds;
  creds.make_ca("ca");
  creds.run(
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "
      "'/CN=old' -keyout old.key -out old.csr");
  creds.run(
      "openssl x509 -req -in old.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days -1 "
      "-out old.pem");
  Status status = creds.options("old", "ca").validate({"--tls_cert", "--tls_key", "--tls_ca"});
  testing::check_error(
      status, Code::kInvalidArgument,
      "--tls_cert '" + creds.path("old.pem") + "' has expired: it was valid until");
  BOOST_TEST(status.message().find("not signed") == std::string::npos, status.to_string());
}

BOOST_AUTO_TEST_CASE(a_private_key_others_can_read_is_refused_with_the_chmod_to_run) {
  TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions good = creds.make_certificate("node", "ca");
  check_ok(good.validate());  // openssl writes keys 0600
  creds.run("chmod 640 node.key");
  testing::check_error(good.validate({"--tls_cert", "--tls_key", "--tls_ca"}),
                       Code::kInvalidArgument,
                       "--tls_key '" + good.key_file +
                           "' is accessible by group or others (mode 0640); a private key must "
                           "be private: run chmod 600 '" +
                           good.key_file + "'");
  creds.run("chmod 600 node.key");
  check_ok(good.validate());
}

BOOST_AUTO_TEST_CASE(only_clients_with_the_clusters_credentials_get_in) {
  TlsCredentials creds;
  creds.make_ca("ca");
  creds.make_ca("other_ca");
  ServerOptions options;
  options.runtime = runtime_with(creds.make_certificate("node", "ca"));
  auto server = value_or_throw(Server::create(ServerDef::local(), options));
  std::string target = server->target();
  std::string device = "/job:localhost/task:0";

  int64_t result = 0;
  auto member = runtime_with(creds.make_certificate("client", "ca"));
  check_ok(run_step_on(target, device, member, &result));
  BOOST_TEST(result == 42);

  auto plain = value_or_throw(Runtime::create());
  testing::check_error(run_step_on(target, device, plain, &result), Code::kUnavailable,
                       "this process does not use TLS");
  auto stranger = runtime_with(creds.make_certificate("stranger", "other_ca"));
  testing::check_error(run_step_on(target, device, stranger, &result), Code::kUnavailable,
                       "this process uses TLS");
  // A CA with the cluster CA's very name, but another key, is no better.
  creds.run(
      "mkdir fake && cd fake && openssl req -x509 -newkey ec -pkeyopt "
      "ec_paramgen_curve:prime256v1 -nodes -days 2 -subj '/CN=ca' -keyout ca.key -out "
      "ca.pem && cp ca.pem ../fake_ca.pem && cp ca.key ../fake_ca.key");
  auto impostor = runtime_with(creds.make_certificate("impostor", "fake_ca"));
  testing::check_error(run_step_on(target, device, impostor, &result), Code::kUnavailable,
                       "this process uses TLS");

  result = 0;
  check_ok(run_step_on(target, device, member, &result));
  BOOST_TEST(result == 42);
}

// CAF's OpenSSL module would negotiate TLS 1.2 (and its CBC-SHA1 suites) with a client that
// offers no more; a node takes TLS 1.3 only, as the tensor channel does.
BOOST_AUTO_TEST_CASE(a_node_takes_tls_1_3_only) {
  TlsCredentials creds;
  creds.make_ca("ca");
  ServerOptions options;
  options.runtime = runtime_with(creds.make_certificate("node", "ca"));
  auto server = value_or_throw(Server::create(ServerDef::local(), options));
  const TlsOptions member = creds.make_certificate("client", "ca");
  const uint16_t port =
      static_cast<uint16_t>(value_or_throw(parse_host_port(server->address())).second);
  // A handshake as a client of at most `max_version`, with libssl's own SSL_connect (this
  // program's makes every connection TLS 1.3 only, clients included): the version agreed, or
  // 0 if the handshake failed.
  auto handshake = [&](int max_version) {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                              SSL_CTX_free);
    BOOST_REQUIRE(SSL_CTX_use_certificate_file(context.get(), member.certificate_file.c_str(),
                                               SSL_FILETYPE_PEM) == 1);
    BOOST_REQUIRE(
        SSL_CTX_use_PrivateKey_file(context.get(), member.key_file.c_str(), SSL_FILETYPE_PEM) == 1);
    BOOST_REQUIRE(SSL_CTX_set_max_proto_version(context.get(), max_version) == 1);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    SSL* ssl = SSL_new(context.get());
    SSL_set_fd(ssl, fd);
    static auto libssl_connect = reinterpret_cast<int (*)(SSL*)>(::dlsym(RTLD_NEXT, "SSL_connect"));
    const int version = libssl_connect(ssl) == 1 ? SSL_version(ssl) : 0;
    SSL_free(ssl);
    ::close(fd);
    return version;
  };
  BOOST_TEST(handshake(TLS1_3_VERSION) == TLS1_3_VERSION);
  BOOST_TEST(handshake(TLS1_2_VERSION) == 0, "a TLS 1.2 client was accepted");
  // The node is still serving.
  BOOST_TEST(handshake(TLS1_3_VERSION) == TLS1_3_VERSION);
}

// Regression: two TLS tasks that each connect to the other (the worker to the ps for a step,
// then the ps back to the worker) lost each other, because CAF's OpenSSL module read a stale
// OpenSSL error left by the redundant connection it closed
// (actors/transport/openssl_error_queue.cpp).
BOOST_AUTO_TEST_CASE(tasks_connect_to_each_other_both_ways) {
  TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions ps_tls = creds.make_certificate("ps", "ca");
  TlsOptions worker_tls = creds.make_certificate("worker", "ca");
  TwoTasks tasks(ps_tls, worker_tls);
  auto client = runtime_with(creds.make_certificate("client", "ca"));
  std::string on_worker = tasks.servers[1]->target(), on_ps = tasks.servers[0]->target();
  // One session that stays open on the worker, one opened on the ps after it.
  Scope root = Scope::new_root();
  auto on_ps_device = ops::Add(root.with_device("/job:ps/task:0"), int64_t{40}, int64_t{2});
  auto on_worker_device = ops::Add(root.with_device("/job:worker/task:0"), int64_t{40}, int64_t{2});
  Session worker_master = value_or_throw(Session::create(on_worker, std::nullopt, client));
  BOOST_TEST(value_or_throw(worker_master.run(on_ps_device)).scalar<int64_t>() ==
             42);  // worker -> ps
  Session ps_master = value_or_throw(Session::create(on_ps, std::nullopt, client));
  for (int round = 0; round < 10; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_TEST(value_or_throw(ps_master.run(on_worker_device)).scalar<int64_t>() ==
                 42);  // ps -> worker
      BOOST_TEST(value_or_throw(worker_master.run(on_ps_device)).scalar<int64_t>() == 42);
    }
    // Not a condition: time for the redundant connection to close and for reads to follow
    // on the other, between rounds, so that the rounds see different states of the race.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

BOOST_AUTO_TEST_CASE(a_task_with_another_cas_certificate_cannot_join) {
  TlsCredentials creds;
  creds.make_ca("ca");
  creds.make_ca("other_ca");
  TwoTasks tasks(creds.make_certificate("ps", "other_ca"), creds.make_certificate("worker", "ca"));
  auto client = runtime_with(creds.make_certificate("client", "ca"));
  int64_t result = 0;
  testing::check_error(run_step_on(tasks.servers[1]->target(), "/job:ps/task:0", client, &result),
                       Code::kUnavailable,
                       "/job:ps/replica:0/task:0 at " + tasks.servers[0]->address() +
                           " refused the connection during the handshake");  // not retried
  // The worker itself still serves.
  SessionConfig worker_only;
  worker_only.device_filters = {"/job:worker"};
  check_ok(
      run_step_on(tasks.servers[1]->target(), "/job:worker/task:0", client, &result, worker_only));
  BOOST_TEST(result == 42);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
