// hooks/tf_config: the program's serialized ConfigProto read and extended, and
// the configs the program set, per options object (hooks/tf.cpp's helpers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pw::hooks::tf {

// ConfigProto field numbers, read from the wheel's own descriptor
// (tensorflow/core/protobuf/config.proto): both int32, varint-encoded.
constexpr int kIntraField = 2;  // intra_op_parallelism_threads
constexpr int kInterField = 5;  // inter_op_parallelism_threads

struct UserConfig {
  bool readable = true;  // false: not a protobuf we can walk; nothing is changed
  long intra = 0;        // last value of each field, 0 = not set (the system picks)
  long inter = 0;
};

// Top-level fields only (graph/'s wire reader); the two we care about are varints.
UserConfig config_scan(const void* data, size_t n);
// Appends a varint field (protobuf: the last value of a field wins).
void field_append(std::string* s, int field, uint64_t v);

// The last TF_SetConfig bytes of a TF_SessionOptions ("" when none).
void remember_session_config(const void* opts, const void* proto, size_t len);
std::string session_config_of(const void* opts);
// A TF_SessionOptions or TFE_ContextOptions is deleted: its entries go.
void forget_options(const void* opts);
// Whether a TFE_ContextOptions was already given our fields (taken: cleared).
bool take_ctx_configured(const void* opts);
void mark_ctx_configured(const void* opts);

}  // namespace pw::hooks::tf
