// hooks/tf_config: TensorFlow's ConfigProto bytes, and the configs remembered per
// options object. Bounded: a few options objects are alive at once.
#include "hooks/tf_config.h"

#include <mutex>
#include <string_view>
#include <vector>

#include "graph/proto_reader.h"

namespace pw::hooks::tf {
namespace {

std::mutex g_mu;
struct Remembered {
  const void* opts;
  std::string config;
};
// TF_SessionOptions -> last TF_SetConfig bytes
std::vector<Remembered>& session_configs() {
  static auto* v = new std::vector<Remembered>();
  return *v;
}
// TFE_ContextOptions already given our fields
std::vector<const void*>& ctx_configured() {
  static auto* v = new std::vector<const void*>();
  return *v;
}
constexpr size_t kRemember = 64;  // options objects alive at once, in practice a few

}  // namespace

UserConfig config_scan(const void* data, size_t n) {
  UserConfig c;
  graph::proto::Reader r(std::string_view(static_cast<const char*>(data), data ? n : 0), 0);
  graph::proto::Field f;
  while (r.next(&f)) {
    if (f.wire != graph::proto::kVarint) continue;
    // int32 fields: a negative value is sign-extended to 64 bits.
    if (f.number == kIntraField) c.intra = static_cast<long>(static_cast<int32_t>(f.varint));
    if (f.number == kInterField) c.inter = static_cast<long>(static_cast<int32_t>(f.varint));
  }
  c.readable = r.ok();
  return c;
}

void field_append(std::string* s, int field, uint64_t v) {
  uint64_t key = static_cast<uint64_t>(field) << 3;
  for (uint64_t x : {key, v}) {
    while (x >= 0x80) {
      s->push_back(static_cast<char>((x & 0x7f) | 0x80));
      x >>= 7;
    }
    s->push_back(static_cast<char>(x));
  }
}

void remember_session_config(const void* opts, const void* proto, size_t len) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (Remembered& r : session_configs())
    if (r.opts == opts) {
      r.config.assign(static_cast<const char*>(proto), proto ? len : 0);
      return;
    }
  if (session_configs().size() >= kRemember) session_configs().erase(session_configs().begin());
  session_configs().push_back(
      {opts, std::string(static_cast<const char*>(proto), proto ? len : 0)});
}

std::string session_config_of(const void* opts) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Remembered& r : session_configs())
    if (r.opts == opts) return r.config;
  return std::string();
}

void forget_options(const void* opts) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < session_configs().size(); ++i)
    if (session_configs()[i].opts == opts) {
      session_configs().erase(session_configs().begin() + static_cast<long>(i));
      break;
    }
  for (size_t i = 0; i < ctx_configured().size(); ++i)
    if (ctx_configured()[i] == opts) {
      ctx_configured().erase(ctx_configured().begin() + static_cast<long>(i));
      break;
    }
}

bool take_ctx_configured(const void* opts) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < ctx_configured().size(); ++i)
    if (ctx_configured()[i] == opts) {
      ctx_configured().erase(ctx_configured().begin() + static_cast<long>(i));
      return true;
    }
  return false;
}

void mark_ctx_configured(const void* opts) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const void* o : ctx_configured())
    if (o == opts) return;
  if (ctx_configured().size() >= kRemember) ctx_configured().erase(ctx_configured().begin());
  ctx_configured().push_back(opts);
}

}  // namespace pw::hooks::tf
