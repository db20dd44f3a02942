// `troupe k8s`: prints the Kubernetes manifests of a troupe job
// (apps/deploy/kubernetes_manifests.hpp) as one YAML stream for `kubectl apply -f -`.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/deploy/kubernetes_manifests.hpp"
#include "troupe/apps/deploy/throwaway_credentials.hpp"
#include "troupe/apps/deploy/yaml.hpp"

namespace troupe::cli {
namespace {

using deploy::KubernetesJob;
using deploy::ThrowawayCredentials;
using deploy::TlsPem;

int usage_error(const std::string& message) {
  std::cerr << "troupe k8s: " << message << "\n";
  return 2;
}

StatusOr<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return errors::NotFound("cannot read the throwaway credential file '{}': {}", path,
                            std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Fresh throwaway credentials (a self-signed certificate that is its own CA), as PEM text.
StatusOr<TlsPem> make_credentials() {
  TROUPE_ASSIGN_OR_RETURN(auto made, ThrowawayCredentials::create("troupe k8s"));
  TlsOptions files = made->tls();
  TlsPem pem;
  TROUPE_ASSIGN_OR_RETURN(pem.certificate, read_text(files.certificate_file));
  TROUPE_ASSIGN_OR_RETURN(pem.key, read_text(files.key_file));
  TROUPE_ASSIGN_OR_RETURN(pem.ca, read_text(files.ca_file));
  return pem;
}

}  // namespace

int k8s_command(const Args& args) {
  FlagSet flags(*find_command_help("k8s"));
  KubernetesJob job;
  flags.add_string("name", "", "the job's name: every object's name starts with it (required)");
  flags.add_string("namespace", "", "the objects' namespace (default: where they are applied)");
  flags.add_int("ps", job.ps, "number of ps tasks (>= 0)");
  flags.add_int("workers", job.workers, "number of worker tasks (>= 1); worker 0 is the chief");
  flags.add_string("image", "", "the troupe image the tasks run (required)");
  flags.add_int("port", job.port, "every task's port");
  flags.add_int("health_port", job.health_port,
                "the port of every task's health checks, which its probes ask (0: no probes)");
  flags.add_string("storage", job.storage, "the size of the shared volume at /train_logs");
  flags.add_string("storage_class", "",
                   "its storage class, one that offers ReadWriteMany (default: the cluster's)");
  flags.add_string("tensorboard_image", job.tensorboard_image,
                   "an image with the tensorboard command");
  flags.add_bool("make_credentials", false,
                 "add a Secret with throwaway TLS credentials made now (else create the Secret "
                 "<name>-tls yourself: docs/deploy.md)");
  flags.add_bool("insecure", false, "the tasks run without TLS (no Secret)");
  flags.add_bool("help", false, "show this help");  // so that --help=false parses; not listed
  auto dash = std::find(args.begin(), args.end(), "--");
  Status parsed = flags.parse(Args(args.begin(), dash));
  if (parsed.ok() && !flags.positional().empty()) {
    parsed = errors::InvalidArgument("unexpected argument '{}' before '--'", flags.positional()[0]);
  }
  if (FlagSet::asks_for_help(args)) {
    std::cout << flags.help();
    return 0;
  }
  if (!parsed.ok()) return usage_error(parsed.message());
  if (flags.get_string("name").empty()) {
    return usage_error(
        "--name is required: the job's name, which every object's name starts "
        "with (e.g. --name=fashion)");
  }
  job.name = flags.get_string("name");
  job.namespace_ = flags.get_string("namespace");
  job.ps = static_cast<int>(flags.get_int("ps"));
  job.workers = static_cast<int>(flags.get_int("workers"));
  job.image = flags.get_string("image");
  job.port = static_cast<int>(flags.get_int("port"));
  job.health_port = static_cast<int>(flags.get_int("health_port"));
  job.storage = flags.get_string("storage");
  job.storage_class = flags.get_string("storage_class");
  job.tensorboard_image = flags.get_string("tensorboard_image");
  job.insecure = flags.get_bool("insecure");
  if (dash != args.end()) job.program.assign(dash + 1, args.end());
  if (job.insecure && flags.get_bool("make_credentials")) {
    return usage_error("--insecure and --make_credentials: choose one");
  }
  auto objects = deploy::kubernetes_manifests(job);
  if (!objects.ok()) return usage_error(objects.status().message());
  if (flags.get_bool("make_credentials")) {
    auto pem = make_credentials();
    if (!pem.ok()) {
      std::cerr << "troupe k8s: " << pem.status().message() << "\n";
      return 1;
    }
    job.credentials = std::move(pem).value();
    objects = deploy::kubernetes_manifests(job);
  }
  if (job.credentials) {
    // The Secret holds a private key: a file the output is redirected to is made the owner's.
    struct stat out_stat {};
    if (::fstat(STDOUT_FILENO, &out_stat) == 0 && S_ISREG(out_stat.st_mode)) {
      ::fchmod(STDOUT_FILENO, 0600);
    }
  }
  if (!job.insecure && !job.credentials) {
    std::cerr << "troupe k8s: the tasks mount the Secret '" << job.name
              << "-tls' (ca.pem, cert.pem, key.pem): create it before applying these manifests "
                 "(docs/deploy.md), or run with --make_credentials to include throwaway ones\n";
  }
  std::string out = "# troupe k8s: kubectl apply -f <this file> (docs/deploy.md)\n";
  for (const auto& object : *objects)
    out += "---\n" + deploy::to_yaml(object);
  std::cout << out << std::flush;
  return 0;
}

}  // namespace troupe::cli
