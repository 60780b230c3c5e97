// The contract of overlap, as the judge and the worker exchange it (../course_remote.hpp).
//
// The test's BatchSource crosses as a callback, which the training loops call from the
// worker's thread of the test's lane: the test's function runs on the test's thread, as in
// one process, and the CUDA calls it makes (the simulator's modelled host time) run on the
// worker's thread that called it. The buffer it is handed is the loop's page-locked slot, in
// the host memory both processes map: the judge checks that the whole batch lies there
// before the test's function writes into it.
#include "overlap.hpp"

#include "course_remote.hpp"

#include <cstdint>
#include <string>

COURSE_REMOTE_FUNCTION(void, launch_train_step,
                       (float* d_weights, const float* d_batch, int rows, int features, int repeats,
                        cudaStream_t stream),
                       (d_weights, d_batch, rows, features, repeats, stream))

namespace {

using course::remote::Reader;
using course::remote::Writer;

}  // namespace

#ifdef COURSE_REMOTE_JUDGE

namespace {

/// The arguments of a training loop: its shape, the test's source, the weights.
Writer loop_arguments(const TrainConfig& config, const BatchSource& source, float* d_weights) {
  Writer arguments;
  arguments.put(config);
  if (!source) {
    arguments.put<std::uint64_t>(0);
  } else {
    const std::size_t floats =
        config.rows > 0 && config.features > 0 ? static_cast<std::size_t>(config.rows) * config.features : 0;
    course::remote::put_borrowed_callback(arguments, [&source, floats](Reader& in, Writer&) {
      const auto b = in.get<std::int64_t>();
      float* batch = course::remote::checked_shared_host(
          in.get_address<float*>(), floats, "the buffer handed to source(" + std::to_string(b) + ", ...)");
      source(b, batch);
    });
  }
  arguments.put_address(d_weights);
  return arguments;
}

}  // namespace

void train_synchronous(const TrainConfig& config, const BatchSource& source, float* d_weights) {
  course::remote::call_with("train_synchronous", loop_arguments(config, source, d_weights), [](Reader&) {});
}

void train_overlapped(const TrainConfig& config, const BatchSource& source, float* d_weights, int depth) {
  Writer arguments = loop_arguments(config, source, d_weights);
  arguments.put<std::int32_t>(depth);
  course::remote::call_with("train_overlapped", arguments, [](Reader&) {});
}

#endif  // COURSE_REMOTE_JUDGE

#ifdef COURSE_REMOTE_WORKER

namespace {

void synchronous(Reader& in, Writer&) {
  const auto config = in.get<TrainConfig>();
  const BatchSource source = course::remote::callback_function<std::int64_t, float*>(in.get<std::uint64_t>());
  train_synchronous(config, source, in.get_address<float*>());
}

void overlapped(Reader& in, Writer&) {
  const auto config = in.get<TrainConfig>();
  const BatchSource source = course::remote::callback_function<std::int64_t, float*>(in.get<std::uint64_t>());
  float* d_weights = in.get_address<float*>();
  train_overlapped(config, source, d_weights, in.get<std::int32_t>());
}

const bool registered = course::remote::register_handler("train_synchronous", synchronous) &&
                        course::remote::register_handler("train_overlapped", overlapped);

}  // namespace

#endif  // COURSE_REMOTE_WORKER
