// Internal ops the runtime inserts into graphs it runs; users do not build them.
//   _Arg:    output `index` of the step's arguments (a fed tensor).
//   _Retval: makes its input result `index` of the step (a fetched tensor).
//   _Send:   hands its input to `recv_device` under the step's key for `tensor_name`.
//   _Recv:   outputs the tensor `send_device` sent under that key (waits for it).
#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {

void register_internal_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("_Arg")
                       .output("output: T")
                       .attr("T: type")
                       .attr("index: int >= 0")
                       .attr("shape: shape = <unknown>")
                       .shape_fn([](InferenceContext& c) {
                         c.set_output(0, c.attr<PartialShape>("shape"));
                         return Status::OK();
                       }));
  // A function body's result. With allow_dead, the result may come from the branch of a cond
  // that was not taken: the caller then finds an uninitialized tensor in its place (a while
  // loop's record of a random op drawn in a branch); otherwise that fails the call.
  must_register(r, OpDefBuilder("_Retval")
                       .input("input: T")
                       .attr("T: type")
                       .attr("index: int >= 0")
                       .attr("allow_dead: bool = false")
                       .shape_fn(shapes::no_outputs));
  // A function body's result that is a reference (tf.data's flat_map and interleave return a
  // dataset); shares _Retval's indices.
  must_register(r, OpDefBuilder("_RetvalRef")
                       .input("input: Ref(T)")
                       .attr("T: type")
                       .attr("index: int >= 0")
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("_Send")
                       .input("tensor: T")
                       .attr("T: type")
                       .attr("tensor_name: string")
                       .attr("send_device: string")
                       .attr("recv_device: string")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("_Recv")
                       .output("tensor: tensor_type")
                       .attr("tensor_type: type")
                       .attr("tensor_name: string")
                       .attr("send_device: string")
                       .attr("recv_device: string")
                       .attr("shape: shape = <unknown>")
                       .stateful()
                       .shape_fn([](InferenceContext& c) {
                         c.set_output(0, c.attr<PartialShape>("shape"));
                         return Status::OK();
                       }));
}

}  // namespace troupe
