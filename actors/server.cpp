// Server: task actor lifetime, listening, and the process-local registry.
#include "troupe/actors/server.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/blocking_request.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task_actor.hpp"
#include "troupe/actors/transport/channel_tls.hpp"
#include "troupe/actors/transport/middleman.hpp"
#include "troupe/actors/transport/tensor_channel.hpp"
#include "troupe/graph/cluster/host_port.hpp"

namespace troupe {
namespace {

// How long stop() waits for the task's actors to finish, and start-up requests may take.
constexpr auto kStopTimeout = std::chrono::seconds(30);
const caf::duration kStartTimeout{std::chrono::seconds(30)};

// The interface to listen on for `host`: that address if it is one, else every interface.
const char* bind_address(const std::string& host) {
  if (host == "localhost") return "127.0.0.1";
  bool ip = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':';
  });
  return ip ? host.c_str() : nullptr;
}

// Why binding `host`:`port` fails, in the operating system's words, if it does.
std::optional<std::string> why_cannot_bind(const char* host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (::getaddrinfo(host, service.c_str(), &hints, &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  std::optional<std::string> why;
  int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  // As CAF binds: a task restarted at its address must not be refused for the connections
  // its last run left in TIME_WAIT.
  int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
    const int err = errno;
    why = std::strerror(err);
    if (err == EADDRNOTAVAIL) {
      *why +=
          " (no interface of this host has that address: the cluster gives this task "
          "another host's address)";
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return why;
}

// The tasks of `def`'s cluster (the admission caps grow with it).
int cluster_task_count(const ServerDef& def) {
  int tasks = 0;
  for (const auto& [job, by_index] : def.cluster.as_map())
    tasks += static_cast<int>(by_index.size());
  return tasks;
}

}  // namespace

struct Server::Impl {
  caf::actor task;
  std::vector<caf::actor> members;  // the task actor and the actors it owns
  std::shared_ptr<TensorChannel> channel;
};

StatusOr<std::unique_ptr<Server>> Server::create(const ServerDef& server_def,
                                                 ServerOptions options) {
  TROUPE_RETURN_IF_ERROR(options.peers.validate());
  // A ServerDef built field by field has not been through ServerDef::create's checks.
  TROUPE_RETURN_IF_ERROR(ServerDef::create(server_def.cluster, server_def.job_name,
                                           server_def.task_index, server_def.protocol,
                                           server_def.default_session_config)
                             .status());
  if (options.runtime == nullptr) {
    TROUPE_ASSIGN_OR_RETURN(options.runtime, Runtime::shared_default());
  }
  std::unique_ptr<Server> server(new Server(server_def, std::move(options)));
  TROUPE_RETURN_IF_ERROR(server->start());
  return server;
}

StatusOr<std::unique_ptr<Server>> Server::create_local_server(SessionConfig config,
                                                              std::shared_ptr<Runtime> runtime) {
  ServerDef def = ServerDef::local();
  def.default_session_config = config;
  ServerOptions options;
  options.listen = false;
  options.runtime = std::move(runtime);
  return create(def, std::move(options));
}

Server::Server(ServerDef server_def, ServerOptions options)
    : server_def_(std::move(server_def)),
      options_(std::move(options)),
      impl_(std::make_unique<Impl>()) {}

Status Server::start() {
  TROUPE_ASSIGN_OR_RETURN(address_, server_def_.address());
  TROUPE_ASSIGN_OR_RETURN(auto host_port, parse_host_port(address_));
  caf::actor_system& system = options_.runtime->system();

  // An address this host cannot listen on (taken, or another host's) is named before anything
  // starts.
  if (options_.listen) {
    if (auto why = why_cannot_bind(bind_address(host_port.first), host_port.second)) {
      return errors::Unavailable("cannot listen on {} for {}: {}", address_, task_name(), *why);
    }
  }
  // Bulk tensors to and from other processes go beside CAF's messages, with the task's TLS
  // credentials if it has them.
  if (options_.listen && options_.tensor_channel) {
    std::shared_ptr<const ChannelTls> tls;
    AdmissionOptions admission =
        options_.runtime->options().admission.for_cluster(cluster_task_count(server_def_));
    if (const TlsOptions& credentials = options_.runtime->options().tls; credentials.enabled()) {
      TROUPE_ASSIGN_OR_RETURN(tls, ChannelTls::create(credentials));
    }
    TROUPE_ASSIGN_OR_RETURN(
        impl_->channel,
        TensorChannel::start(system, host_port.first, bind_address(host_port.first),
                             {.max_bytes = max_message_bytes(system),
                              .shared_memory = options_.shared_memory,
                              .calls = options_.channel_calls,
                              .tls = std::move(tls),
                              .port = options_.channel_port,
                              .handshake_timeout = admission.handshake_timeout,
                              .max_pending = admission.max_pending,
                              .max_pending_per_peer = admission.max_pending_per_peer}));
  }
  caf::actor task = spawn_task_actor(
      system, TaskActorConfig{server_def_, options_.peers, options_.faults, impl_->channel,
                              options_.cpu_pool, options_.in_process_group});
  impl_->task = task;
  if (options_.listen) {
    // Port 0 picks a free port; address() then reports the real one.
    const char* bind = bind_address(host_port.first);
    auto port = publish(system, task, static_cast<uint16_t>(host_port.second), bind,
                        cluster_task_count(server_def_));
    if (!port) {
      caf::anon_send_exit(task, caf::exit_reason::user_shutdown);
      impl_->task = nullptr;
      return errors::Unavailable(
          "cannot listen on {} for {}: {}", address_, task_name(),
          why_cannot_bind(bind, host_port.second).value_or(system.render(port.error())));
    }
    address_ = fmt::format("{}:{}", host_port.first, *port);
  }

  auto master = blocking_request<caf::actor>(system, task, kStartTimeout, "starting the task",
                                             get_master_atom::value);
  TROUPE_RETURN_IF_ERROR(master.status());
  auto directory = blocking_request<caf::actor>(system, task, kStartTimeout, "starting the task",
                                                get_directory_atom::value);
  TROUPE_RETURN_IF_ERROR(directory.status());
  auto devices = blocking_request<std::vector<DeviceInfo>>(
      system, task, kStartTimeout, "starting the task", get_devices_atom::value);
  TROUPE_RETURN_IF_ERROR(devices.status());
  for (const DeviceInfo& d : *devices)
    impl_->members.push_back(d.actor);
  impl_->members.push_back(*master);
  impl_->members.push_back(*directory);
  impl_->members.push_back(task);

  LocalTask local{options_.runtime, task};
  inproc_target_ = register_inproc_target(local);
  register_local_address(address_, local);
  if (!options_.in_process_group.empty()) {
    register_in_process_task(in_process_task_name(options_.in_process_group, server_def_.job_name,
                                                  server_def_.task_index),
                             local);
  }
  target_ = options_.listen ? "troupe://" + address_ : inproc_target_;
  return Status::OK();
}

Server::~Server() {
  stop();
}

caf::actor_system& Server::system() const {
  return options_.runtime->system();
}

StatusOr<caf::actor> Server::find_role(const std::string& job, int index) const {
  auto directory = blocking_request<caf::actor>(system(), impl_->task, kStartTimeout,
                                                "finding the directory", get_directory_atom::value);
  TROUPE_RETURN_IF_ERROR(directory.status());
  return blocking_request<caf::actor>(
      system(), *directory, caf::duration(options_.peers.connect_timeout),
      fmt::format("finding the role of /job:{}/task:{}", job, index), resolve_role_atom::value, job,
      static_cast<int32_t>(index));
}

Status Server::check_health(std::chrono::milliseconds timeout) {
  // Not under mutex_: stop() holds it while it waits for the task's actors.
  if (stopping_) return errors::Unavailable("{} is stopping", task_name());
  return local_request<caf::unit_t>(system(), impl_->task, caf::duration(timeout),
                                    fmt::format("{} answering a health check", task_name()),
                                    heartbeat_atom::value)
      .status();
}

void Server::stop() {
  stopping_ = true;
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  if (impl_->task != nullptr) {
    unregister_local_task(impl_->task);
    // Stop the task and wait until it and the actors it owns are gone, so nothing it owned
    // serves a step after stop() returns.
    caf::scoped_actor self{options_.runtime->system()};
    for (const caf::actor& member : impl_->members)
      self->monitor(member);
    if (options_.listen) {
      auto host_port = parse_host_port(address_);
      unpublish(options_.runtime->system(), impl_->task,
                host_port.ok() ? static_cast<uint16_t>(host_port->second) : 0);
    }
    self->send_exit(impl_->task, caf::exit_reason::user_shutdown);
    size_t down = 0;
    self->receive_while([&] { return down < impl_->members.size(); })(
        [&](caf::down_msg&) { ++down; }, caf::after(kStopTimeout) >> [&] { down = SIZE_MAX; });
  }
  if (impl_->channel != nullptr) impl_->channel->stop();
  stopped_cv_.notify_all();
}

const TensorChannel* Server::tensor_channel() const {
  return impl_->channel.get();
}

void Server::join() {
  std::unique_lock lock(mutex_);
  stopped_cv_.wait(lock, [this] { return stopped_; });
}

}  // namespace troupe
