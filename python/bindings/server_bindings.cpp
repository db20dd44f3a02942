// troupe._troupe's Server: create (one task of a cluster, listening), create_local_server,
// join (interruptible; Ctrl-C stops the server) and stop; and the health endpoint a task's
// Server serves for Kubernetes' probes when TROUPE_HEALTH_PORT names a port.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "blocking_call.hpp"
#include "python_errors.hpp"
#include "troupe/actors/health_endpoint.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/devices/gpu/gpu_runtime.hpp"

namespace py = pybind11;

namespace troupe::python {

void bind_server(py::module_& m) {
  // The GPUs a task of this process gets (tf.test.is_gpu_available; docs/gpu.md).
  m.def("built_with_cuda", &built_with_cuda);
  m.def("gpu_count", &gpu_count);
  py::class_<Server, std::shared_ptr<Server>>(m, "Server")
      .def_static("create",
                  [](const std::map<std::string, std::map<int, std::string>>& cluster,
                     const std::string& job_name, int task_index, const std::string& protocol,
                     const SessionConfig& config) {
                    ServerDef def =
                        check(ServerDef::create(check(ClusterSpec::create_sparse(cluster)),
                                                job_name, task_index, protocol, config));
                    StatusOr<std::unique_ptr<Server>> server = Status::OK();
                    without_gil([&] { server = Server::create(def); });
                    keep_runtime_alive();
                    return std::shared_ptr<Server>(check(std::move(server)));
                  })
      .def_static("create_local_server",
                  [](const SessionConfig& config) {
                    StatusOr<std::unique_ptr<Server>> server = Status::OK();
                    without_gil([&] { server = Server::create_local_server(config); });
                    keep_runtime_alive();
                    return std::shared_ptr<Server>(check(std::move(server)));
                  })
      .def_property_readonly("target", &Server::target)
      .def_property_readonly("address", &Server::address)
      .def_property_readonly("task_name", &Server::task_name)
      .def("join",
           [](Server& server) {
             call_interruptibly([&] { server.join(); }, [&] { server.stop(); });
           })
      .def("stop", [](Server& server) { without_gil([&] { server.stop(); }); });
  // GET /healthz and /readyz on `port`, answered by the server's check_health until the
  // endpoint is collected (actors/health_endpoint.hpp).
  py::class_<HealthEndpoint>(m, "HealthEndpoint")
      .def_static("start",
                  [](int port, std::shared_ptr<Server> server) {
                    return check(HealthEndpoint::start(port, [server] {
                      return server->check_health(std::chrono::milliseconds(1000));
                    }));
                  })
      .def_property_readonly("port", &HealthEndpoint::port);
}

}  // namespace troupe::python
