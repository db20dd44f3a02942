// tf.py_func's ops: PyFunc (stateful) and PyFuncStateless call the function registered under
// `token` in the Python interpreter of the process that runs them (devices/py_func.hpp). As in
// TensorFlow, they run only in the process of the Python program that built them.
#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {

void register_script_ops(OpRegistry& r) {
  for (const char* name : {"PyFunc", "PyFuncStateless"}) {
    OpDefBuilder op = OpDefBuilder(name)
                          .input("input: Tin")
                          .output("output: Tout")
                          .attr("token: string")
                          .attr("Tin: list(type) = []")
                          .attr("Tout: list(type) = []")
                          .shape_fn([](InferenceContext& c) {
                            for (int i = 0; i < c.num_outputs(); ++i)
                              c.set_output(i, PartialShape::unknown());
                            return Status::OK();
                          });
    if (std::string(name) == "PyFunc") op.stateful();
    must_register(r, op);
  }
}

}  // namespace troupe
