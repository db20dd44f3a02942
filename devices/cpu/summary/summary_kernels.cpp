// CPU kernels of the summary ops (graph/ops/summary_ops.hpp): each writes a serialized
// tensorflow.Summary, field by field (graph/core/protobuf_wire.hpp):
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; Image image = 4; HistogramProto histo = 5;
//             Audio audio = 6; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
//   Image   { int32 height = 1; int32 width = 2; int32 colorspace = 3;
//             bytes encoded_image_string = 4; }
//   Audio   { float sample_rate = 1; int64 num_channels = 2; int64 length_frames = 3;
//             bytes encoded_audio_string = 4; string content_type = 5; }
//   TensorProto as graph/core/tensor_proto.hpp writes it
#include <algorithm>
#include <cmath>
#include <set>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/summary/histogram.hpp"
#include "troupe/devices/cpu/summary/png_encoder.hpp"
#include "troupe/devices/cpu/summary/wav_encoder.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/tensor_proto.hpp"

namespace troupe {
namespace {

using proto::put_bytes;
using proto::put_float;
using proto::put_int;

std::string value_with_tag(const std::string& tag) {
  std::string value;
  put_bytes(value, 1, tag);
  return value;
}

// A Summary of `values` (each a serialized Value) as the op's string scalar output.
void output_summary(OpKernelContext& ctx, const std::vector<std::string>& values) {
  std::string summary;
  for (const std::string& value : values)
    put_bytes(summary, 1, value);
  ctx.set_output(0, Tensor(summary));
}

// The scalar string tag of input 0, or nullopt after failing the kernel.
std::optional<std::string> tag_input(OpKernelContext& ctx) {
  const Tensor& tag = ctx.input(0);
  if (tag.dtype() != DataType::kString || tag.num_elements() != 1 || tag.shape().rank() != 0) {
    ctx.fail_invalid("the tag must be a string scalar, got {} {}", dtype_name(tag.dtype()),
                     tag.shape().to_string());
    return std::nullopt;
  }
  return tag.scalar<std::string>();
}

double element_as_double(const Tensor& t, int64_t i) {
  double value = 0;
  TROUPE_SWITCH_NUMERIC(t.dtype(), T, value = static_cast<double>(t.data<T>()[i]));
  return value;
}

class ScalarSummaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& tags = ctx.input(0);
    const Tensor& values = ctx.input(1);
    if (tags.shape() != values.shape()) {
      ctx.fail_invalid("tags and values are not the same shape: {} != {}", tags.shape().to_string(),
                       values.shape().to_string());
      return;
    }
    std::vector<std::string> out;
    for (int64_t i = 0; i < tags.num_elements(); ++i) {
      std::string value = value_with_tag(tags.data<std::string>()[i]);
      put_float(value, 2, static_cast<float>(element_as_double(values, i)));
      out.push_back(std::move(value));
    }
    output_summary(ctx, out);
  }
};

class HistogramSummaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    auto tag = tag_input(ctx);
    if (!tag) return;
    const Tensor& values = ctx.input(1);
    summary::Histogram histogram;
    for (int64_t i = 0; i < values.num_elements(); ++i) {
      double v = element_as_double(values, i);
      if (!std::isfinite(v)) {
        ctx.fail_invalid("Nan in summary histogram for: {}", *tag);
        return;
      }
      histogram.add(v);
    }
    std::string value = value_with_tag(*tag);
    put_bytes(value, 5, histogram.encode());
    output_summary(ctx, {value});
  }
};

// TensorFlow's mapping of a float image to 8 bits: non-negative images scaled so their
// maximum is 255, others so that 0 is 128 and the largest magnitude 127 away; non-finite
// pixels take `bad_color` (red).
template <class T>
std::vector<uint8_t> image_to_uint8(const T* values, int64_t pixels, int channels) {
  constexpr float kZeroThreshold = 1e-6f;
  constexpr uint8_t kBadColor[4] = {255, 0, 0, 255};
  float lo = 0, hi = 0;
  bool any = false;
  for (int64_t i = 0; i < pixels * channels; ++i) {
    if (!std::isfinite(static_cast<double>(values[i]))) continue;
    float v = static_cast<float>(values[i]);
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  float scale, offset;
  if (lo < 0) {
    float largest = std::max(std::abs(lo), std::abs(hi));
    scale = largest < kZeroThreshold ? 0.0f : 127.0f / largest;
    offset = 128.0f;
  } else {
    scale = hi < kZeroThreshold ? 0.0f : 255.0f / hi;
    offset = 0.0f;
  }
  std::vector<uint8_t> out(static_cast<size_t>(pixels * channels));
  for (int64_t p = 0; p < pixels; ++p) {
    bool finite = true;
    for (int c = 0; c < channels; ++c)
      finite = finite && std::isfinite(static_cast<double>(values[p * channels + c]));
    for (int c = 0; c < channels; ++c) {
      float v = static_cast<float>(values[p * channels + c]);
      out[p * channels + c] =
          finite ? static_cast<uint8_t>(std::clamp(v * scale + offset, 0.0f, 255.0f))
                 : kBadColor[c];
    }
  }
  return out;
}

class ImageSummaryKernel : public OpKernel {
 public:
  explicit ImageSummaryKernel(const OpKernelConstruction& c)
      : OpKernel(c), max_images_(c.attr<int64_t>("max_images")) {}

  void compute(OpKernelContext& ctx) override {
    auto tag = tag_input(ctx);
    if (!tag) return;
    const Tensor& images = ctx.input(1);
    const TensorShape& shape = images.shape();
    if (shape.rank() != 4 || shape.dim(1) < 1 || shape.dim(2) < 1 ||
        (shape.dim(3) != 1 && shape.dim(3) != 3 && shape.dim(3) != 4)) {
      ctx.fail_invalid(
          "images must be 4-D [batch, height, width, channels] with 1, 3 or 4 channels and at "
          "least one pixel, got shape {}",
          shape.to_string());
      return;
    }
    int64_t height = shape.dim(1), width = shape.dim(2);
    int channels = static_cast<int>(shape.dim(3));
    int64_t per_image = height * width * channels;
    std::vector<std::string> out;
    for (int64_t i = 0; i < std::min(shape.dim(0), max_images_); ++i) {
      std::vector<uint8_t> pixels;
      if (images.dtype() == DataType::kUint8) {  // as they are, as TensorFlow's
        const uint8_t* image = images.data<uint8_t>() + i * per_image;
        pixels.assign(image, image + per_image);
      }
      TROUPE_SWITCH_FLOATING(
          images.dtype(), T,
          pixels = image_to_uint8(images.data<T>() + i * per_image, height * width, channels));
      auto png = summary::encode_png(pixels.data(), height, width, channels);
      if (!png.ok()) {
        ctx.fail_invalid("{}", png.status().message());
        return;
      }
      std::string image;
      put_int(image, 1, height);
      put_int(image, 2, width);
      put_int(image, 3, channels);
      put_bytes(image, 4, *png);
      std::string value =
          value_with_tag(max_images_ > 1 ? fmt::format("{}/image/{}", *tag, i) : *tag + "/image");
      put_bytes(value, 4, image);
      out.push_back(std::move(value));
    }
    output_summary(ctx, out);
  }

 private:
  int64_t max_images_;
};

class AudioSummaryKernel : public OpKernel {
 public:
  explicit AudioSummaryKernel(const OpKernelConstruction& c)
      : OpKernel(c), max_outputs_(c.attr<int64_t>("max_outputs")) {}

  void compute(OpKernelContext& ctx) override {
    auto tag = tag_input(ctx);
    if (!tag) return;
    const Tensor& audio = ctx.input(1);
    const Tensor& rate = ctx.input(2);
    const TensorShape& shape = audio.shape();
    if (shape.rank() != 2 && shape.rank() != 3) {
      ctx.fail_invalid("audio must be [batch, frames] or [batch, frames, channels], got {}",
                       shape.to_string());
      return;
    }
    if (rate.num_elements() != 1) {
      ctx.fail_invalid("the sample rate must be a scalar, got shape {}", rate.shape().to_string());
      return;
    }
    float sample_rate = rate.scalar<float>();
    if (!(sample_rate > 0) || sample_rate > 1e9f) {
      ctx.fail_invalid("the sample rate must be positive, got {}", sample_rate);
      return;
    }
    int64_t frames = shape.dim(1);
    int channels = shape.rank() == 3 ? static_cast<int>(shape.dim(2)) : 1;
    std::vector<std::string> out;
    for (int64_t i = 0; i < std::min(shape.dim(0), max_outputs_); ++i) {
      auto wav = summary::encode_wav(audio.data<float>() + i * frames * channels, frames, channels,
                                     static_cast<int>(std::lround(sample_rate)));
      if (!wav.ok()) {
        ctx.fail_invalid("{}", wav.status().message());
        return;
      }
      std::string clip;
      put_float(clip, 1, sample_rate);
      put_int(clip, 2, channels);
      put_int(clip, 3, frames);
      put_bytes(clip, 4, *wav);
      put_bytes(clip, 5, "audio/wav");
      std::string value =
          value_with_tag(max_outputs_ > 1 ? fmt::format("{}/audio/{}", *tag, i) : *tag + "/audio");
      put_bytes(value, 6, clip);
      out.push_back(std::move(value));
    }
    output_summary(ctx, out);
  }

 private:
  int64_t max_outputs_;
};

class TensorSummaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    auto tag = tag_input(ctx);
    if (!tag) return;
    const Tensor& metadata = ctx.input(2);
    if (metadata.dtype() != DataType::kString || metadata.num_elements() != 1) {
      ctx.fail_invalid("the summary metadata must be a string scalar");
      return;
    }
    std::string value = value_with_tag(*tag);
    put_bytes(value, 8, encode_tensor_proto(ctx.input(1)));
    put_bytes(value, 9, metadata.scalar<std::string>());
    output_summary(ctx, {value});
  }
};

class MergeSummaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    std::vector<std::string> values;
    std::set<std::string> tags;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& input = ctx.input(i);
      for (int64_t k = 0; k < input.num_elements(); ++k) {
        const std::string what = fmt::format("node '{}' input {}", node().name(), i);
        Status merged = add_values(input.data<std::string>()[k], what, &tags, &values);
        if (!merged.ok()) {
          ctx.set_status(merged.code() == Code::kDataLoss
                             ? errors::InvalidArgument("Could not parse one of the summary inputs "
                                                       "({})",
                                                       merged.message())
                             : merged);
          return;
        }
      }
    }
    output_summary(ctx, values);
  }

 private:
  // Appends the Values of serialized Summary `bytes`; InvalidArgument for a tag seen before.
  Status add_values(std::string_view bytes, const std::string& what, std::set<std::string>* tags,
                    std::vector<std::string>* values) {
    proto::ProtoReader summary(bytes, what);
    while (!summary.done()) {
      uint32_t field, type;
      TROUPE_RETURN_IF_ERROR(summary.read_key(&field, &type));
      if (field != 1) {
        TROUPE_RETURN_IF_ERROR(summary.skip(type));
        continue;
      }
      TROUPE_RETURN_IF_ERROR(summary.expect(field, type, proto::kLengthDelimited));
      std::string_view value;
      TROUPE_RETURN_IF_ERROR(summary.read_bytes(&value));
      proto::ProtoReader fields(value, what);
      std::string tag;
      while (!fields.done()) {
        uint32_t f, t;
        TROUPE_RETURN_IF_ERROR(fields.read_key(&f, &t));
        if (f == 1 && t == proto::kLengthDelimited) {
          std::string_view text;
          TROUPE_RETURN_IF_ERROR(fields.read_bytes(&text));
          tag = std::string(text);
        } else {
          TROUPE_RETURN_IF_ERROR(fields.skip(t));
        }
      }
      if (!tags->insert(tag).second) {
        return errors::InvalidArgument(
            "node '{}' (MergeSummary): Duplicate tag {} found in "
            "summary inputs",
            node().name(), tag);
      }
      values->emplace_back(value);
    }
    return Status::OK();
  }
};

}  // namespace

void register_summary_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ScalarSummary", kCpu, simple_kernel<ScalarSummaryKernel>());
  must_add_kernel(r, "HistogramSummary", kCpu, simple_kernel<HistogramSummaryKernel>());
  must_add_kernel(r, "ImageSummary", kCpu, simple_kernel<ImageSummaryKernel>());
  must_add_kernel(r, "AudioSummaryV2", kCpu, simple_kernel<AudioSummaryKernel>());
  must_add_kernel(r, "TensorSummaryV2", kCpu, simple_kernel<TensorSummaryKernel>());
  must_add_kernel(r, "MergeSummary", kCpu, simple_kernel<MergeSummaryKernel>());
}

}  // namespace troupe
