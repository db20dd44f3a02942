// SeededGenerator and GeneratorHandle: the Philox generator of one random op node, a resource of
// the device in the step's container shared by every run of the node (random_kernels.cpp says
// how seeds are chosen), and what a kernel keeps to find it.
#pragma once

#include <mutex>
#include <random>
#include <string>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/random/philox.hpp"

namespace troupe {

// The generator of one node, shared by its runs.
class SeededGenerator : public Resource {
 public:
  SeededGenerator(std::string name, int64_t seed, int64_t seed2) : name_(std::move(name)) {
    if (seed == 0 && seed2 == 0) {
      std::random_device device;
      seed = static_cast<int64_t>((uint64_t{device()} << 32) | device());
      seed2 = static_cast<int64_t>((uint64_t{device()} << 32) | device());
    }
    generator_ = random::Philox(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  }

  std::string debug_name() const override { return "random generator '" + name_ + "'"; }

  // A generator at the start of `blocks` blocks reserved for one run.
  random::Philox reserve(uint64_t blocks) {
    std::lock_guard lock(mutex_);
    random::Philox start = generator_;
    generator_.skip(blocks);
    return start;
  }

 private:
  std::string name_;
  std::mutex mutex_;
  random::Philox generator_;
};

// What a random kernel keeps: its seeds, and where to find its node's generator.
class GeneratorHandle {
 public:
  explicit GeneratorHandle(const OpKernelConstruction& c)
      : node_(c.name()), seed_(c.attr<int64_t>("seed")), seed2_(c.attr<int64_t>("seed2")) {}

  // The node's generator in the step's container, made at its first run.
  std::shared_ptr<SeededGenerator> get(OpKernelContext& ctx) const {
    const std::string key = fmt::format("_random/{}/{}/{}", node_, seed_, seed2_);
    auto found = ctx.device().resources().lookup_or_create<SeededGenerator>(
        ctx.step().container, key,
        [&]() -> StatusOr<std::shared_ptr<SeededGenerator>> {
          return std::make_shared<SeededGenerator>(node_, seed_, seed2_);
        },
        [](const SeededGenerator&) { return Status::OK(); });
    if (!found.ok()) {
      ctx.set_status(found.status());
      return nullptr;
    }
    return *found;
  }

 private:
  std::string node_;
  int64_t seed_, seed2_;
};

}  // namespace troupe
