// A checkpoint on disk, named by its prefix ("/dir/model.ckpt-7"), and the tensors in it.
//
// A checkpoint is either one archive, "<prefix>.npz", holding every variable whole under its
// name (what Saver writes by default), or a set of shards, "<prefix>.shard-00000-of-00002.npz"
// and so on (what a sharded Saver writes: each shard by the task that holds its variables, as
// TensorFlow's sharded saver writes a data file per device). In a shard a variable is stored
// whole under its name, or — a shard of a partitioned variable — as its slice of the whole
// under "<name>@<shape and slice>" (tensor_slice.hpp's spec: "emb@10 16 0,5:-"). Every file
// is an ordinary .npz that numpy.load reads.
//
// Readers take either layout and any slice of any tensor: a variable saved in 2 slices
// restores into 3 shards, or whole.
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/formats/tensor_slice.hpp"

namespace troupe {

// "<prefix>.shard-<shard>-of-<num_shards>.npz", both numbers in five digits.
std::string checkpoint_shard_file(const std::string& prefix, int shard, int num_shards);

// The key of a slice of tensor `name` inside a shard: "<name>@<spec>".
std::string checkpoint_slice_key(const std::string& name, const std::string& spec);

// The prefix of a checkpoint given as its prefix, its ".npz" or one of its shard files.
std::string checkpoint_prefix_of(const std::string& path);

// The data files of the checkpoint at `prefix` (see checkpoint_prefix_of): "<prefix>.npz", or
// every shard of a complete set; where a save under this name in another layout (or shard
// count) was interrupted before it removed the older files, the layout written last.
// NotFound when there is neither, naming both forms; DataLoss naming the first shard missing
// from a set when no layout is complete.
StatusOr<std::vector<std::string>> checkpoint_data_files(const std::string& prefix);

// How messages name a checkpoint of these data files: its file if it is one, else its prefix.
std::string checkpoint_shown(const std::vector<std::string>& files, const std::string& prefix);

// The data files of `prefix` that exist, complete set or not (for removing a checkpoint).
std::vector<std::string> checkpoint_files_present(const std::string& prefix);

// The tensors `names` of the checkpoint at `prefix`, the i-th cut to `slices[i]` (the whole
// tensor when the spec is whole), assembled from the slices the checkpoint holds where it holds
// no whole tensor of that name. Each file's directory is read, then only the arrays needed.
// checkpoint_data_files' errors; NotFound "Key <name> not found in checkpoint <prefix>";
// InvalidArgument for a slice of another full shape than the tensor's; DataLoss for slices
// that disagree on dtype or shape, overlap, or do not cover what is asked. `shown`, if given,
// is set to how messages name the checkpoint (checkpoint_shown) once its files are found.
StatusOr<std::vector<Tensor>> read_checkpoint_tensors(const std::string& prefix,
                                                      const std::vector<std::string>& names,
                                                      const std::vector<TensorSliceSpec>& slices,
                                                      std::string* shown = nullptr);

// Reads every data file of the checkpoint whole (checking each archive's CRCs): OK when the
// checkpoint is complete and intact.
Status check_checkpoint_readable(const std::string& prefix);

// Every tensor of the checkpoint at `prefix`, whole (slices assembled), sorted by name.
StatusOr<std::vector<std::pair<std::string, Tensor>>> read_checkpoint(const std::string& prefix);

}  // namespace troupe
