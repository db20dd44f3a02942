// Runtime: actor system configuration and the process default.
#include "troupe/actors/runtime.hpp"

#include <sys/resource.h>

#include <mutex>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>

#include "troupe/actors/message_types.hpp"
#include "troupe/actors/messages.hpp"

namespace troupe {
namespace {

struct TypeRegistrars {
  std::mutex mutex;
  std::vector<std::function<void(caf::actor_system_config&)>> registrars;
  bool runtime_created = false;
};

TypeRegistrars& type_registrars() {
  static auto* registrars = new TypeRegistrars();  // never destroyed: used until exit
  return *registrars;
}

}  // namespace

Status Runtime::add_message_types(std::function<void(caf::actor_system_config&)> registrar) {
  TypeRegistrars& r = type_registrars();
  std::lock_guard lock(r.mutex);
  if (r.runtime_created) {
    return errors::FailedPrecondition(
        "message types must be added before the first server or session starts");
  }
  r.registrars.push_back(std::move(registrar));
  return Status::OK();
}

// CAF's configuration with troupe's own options declared (CAF refuses to set undeclared ones).
struct TroupeConfig : caf::actor_system_config {
  TroupeConfig() {
    opt_group{custom_options_, "troupe"}
        .add<int64_t>("max-message-bytes",
                      "largest tensor or graph in one message from another process")
        .add<int64_t>("client-heartbeat-interval-ms", "how often a waiting client asks")
        .add<int64_t>("client-heartbeat-timeout-ms", "how long the asked process has to answer");
  }
};

struct Runtime::Impl {
  explicit Impl(const RuntimeOptions& options)
      : options(options), system(configure(config, options)) {}

  static caf::actor_system_config& configure(caf::actor_system_config& cfg,
                                             const RuntimeOptions& options) {
    cfg.load<caf::io::middleman>();
    if (options.tls.enabled()) {
      cfg.load<caf::openssl::manager>();
      cfg.openssl_certificate = options.tls.certificate_file;
      cfg.openssl_key = options.tls.key_file;
      cfg.openssl_cafile = options.tls.ca_file;
      cfg.openssl_passphrase = options.tls.key_passphrase;
    }
    cfg.set(kMaxMessageBytesKey, static_cast<int64_t>(options.max_message_bytes));
    cfg.set(kClientHeartbeatIntervalKey,
            static_cast<int64_t>(options.client_heartbeat_interval.count()));
    cfg.set(kClientHeartbeatTimeoutKey,
            static_cast<int64_t>(options.client_heartbeat_timeout.count()));
    // An idle work-stealing worker of CAF 0.17 first polls its queue 100 times, then 500 times
    // with a 50 us sleep in between that new work does not cut short, and only then waits on a
    // condition variable that new work signals. A step's every actor hop could wait out such a
    // sleep: skip that middle phase (remote step median 460 -> 225 us, docs/PERFORMANCE.md).
    cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
    if (options.scheduler_threads > 0) {
      cfg.set("scheduler.max-threads", static_cast<size_t>(options.scheduler_threads));
    }
    add_troupe_types(cfg);
    TypeRegistrars& r = type_registrars();
    std::lock_guard lock(r.mutex);
    r.runtime_created = true;
    for (const auto& registrar : r.registrars)
      registrar(cfg);
    return cfg;
  }

  RuntimeOptions options;
  TroupeConfig config;
  caf::actor_system system;
};

namespace {

void raise_open_file_limit() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max ||
        limit.rlim_max == RLIM_INFINITY) {
      return;
    }
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);  // best effort: the old limit still works
  });
}

struct DefaultRuntime {
  std::mutex mutex;
  std::weak_ptr<Runtime> current;
  std::optional<RuntimeOptions> options;  // set_default_options(); else from the environment
};

DefaultRuntime& default_runtime() {
  static auto* state = new DefaultRuntime();  // never destroyed: used until exit
  return *state;
}

}  // namespace

StatusOr<std::shared_ptr<Runtime>> Runtime::create(RuntimeOptions options) {
  TROUPE_RETURN_IF_ERROR(options.validate());
  return std::shared_ptr<Runtime>(new Runtime(std::move(options)));
}

Runtime::Runtime(RuntimeOptions options) {
  raise_open_file_limit();
  impl_ = std::make_unique<Impl>(options);
  accept_gate::configure(impl_->options.admission);
}

Runtime::~Runtime() = default;

caf::actor_system& Runtime::system() {
  return impl_->system;
}

const RuntimeOptions& Runtime::options() const {
  return impl_->options;
}

StatusOr<std::shared_ptr<Runtime>> Runtime::shared_default() {
  DefaultRuntime& d = default_runtime();
  std::lock_guard lock(d.mutex);
  auto runtime = d.current.lock();
  if (!runtime) {
    RuntimeOptions options;
    if (d.options) {
      options = *d.options;
    } else {
      options.tls = TlsOptions::from_environment();
      TROUPE_RETURN_IF_ERROR(options.tls.validate(TlsOptions::environment_names()));
    }
    TROUPE_ASSIGN_OR_RETURN(runtime, create(std::move(options)));
    d.current = runtime;
  }
  return runtime;
}

Status RuntimeOptions::validate() const {
  if (max_message_bytes < kMinMaxMessageBytes || max_message_bytes > kDefaultMaxMessageBytes) {
    return errors::InvalidArgument("max_message_bytes={}: expected {} .. {} bytes",
                                   max_message_bytes, kMinMaxMessageBytes, kDefaultMaxMessageBytes);
  }
  TROUPE_RETURN_IF_ERROR(admission.validate().with_context("admission"));
  if (client_heartbeat_timeout.count() < 0 ||
      (client_heartbeat_timeout.count() > 0 && client_heartbeat_interval.count() < 1)) {
    return errors::InvalidArgument(
        "client_heartbeat_interval {} ms, client_heartbeat_timeout {} ms: expected a timeout "
        ">= 0 (0: no heartbeats) and, with heartbeats, an interval >= 1 ms",
        client_heartbeat_interval.count(), client_heartbeat_timeout.count());
  }
  return tls.validate();
}

Status Runtime::set_default_options(RuntimeOptions options) {
  TROUPE_RETURN_IF_ERROR(options.validate());
  DefaultRuntime& d = default_runtime();
  std::lock_guard lock(d.mutex);
  if (d.current.lock()) {
    return errors::FailedPrecondition(
        "the shared runtime already exists: set its options before the first server or session "
        "of this process starts");
  }
  d.options = std::move(options);
  return Status::OK();
}

}  // namespace troupe
