// machine_text: a machine as a short text, so that a process can reuse the topology that an
// earlier process on the same boot loaded (hwloc costs milliseconds at every activation).
#include <string>
#include <vector>

#include "base/key_lines.h"
#include "topology/internal.h"

namespace pw::topo {
namespace {

constexpr const char* kHeader = "parwidth-machine 1";
using internal::kMaxPus;

// "a,b,c" of non-negative ints below kMaxPus; false on anything else.
bool pus_parse(const std::string& s, std::vector<int>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    long v = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && j - i < 5) v = v * 10 + (s[j++] - '0');
    if (j == i || v >= kMaxPus) return false;
    out->push_back(static_cast<int>(v));
    if (j == s.size()) break;
    if (s[j] != ',' || j + 1 == s.size()) return false;
    i = j + 1;
  }
  return !out->empty();
}

}  // namespace

bool machine_cache_key(std::string* key) {
  std::string boot, online, possible, err;
  if (internal::file_read("/proc/sys/kernel/random/boot_id", &boot, &err) != Status::kOk ||
      internal::file_read("/sys/devices/system/cpu/online", &online, &err) != Status::kOk ||
      internal::file_read("/sys/devices/system/cpu/possible", &possible, &err) != Status::kOk)
    return false;
  boot = internal::trim(boot);
  online = internal::trim(online);
  possible = internal::trim(possible);
  if (boot.empty() || online.empty() || boot.size() > 64 || online.size() > 4096 ||
      possible.size() > 4096)
    return false;
  *key = "boot " + boot + " online " + online + " possible " + possible;
  return true;
}

std::string machine_format(const Machine& m, const std::string& key) {
  std::string s = std::string(kHeader) + "\nkey " + key + "\nsource " + m.source + "\n";
  for (const Socket& sock : m.sockets) {
    s += "socket " + std::to_string(sock.os_index) + "\n";
    for (const Core& c : sock.cores) {
      s += "core ";
      for (size_t i = 0; i < c.pus.size(); ++i) s += (i ? "," : "") + std::to_string(c.pus[i]);
      s += "\n";
    }
  }
  return s + "end\n";
}

Status machine_parse(const std::string& text, const std::string& key, Machine* out,
                     std::string* err) {
  auto bad = [&](const std::string& why) {
    internal::err_set(err, "machine cache: " + why);
    return Status::kInvalid;
  };
  if (text.size() > (1u << 20)) return bad("larger than 1 MiB");
  std::vector<KeyLine> lines;
  std::string framing;
  if (!key_lines_split(text, kHeader, "parwidth machine file", &lines, &framing))
    return bad(framing);
  std::vector<internal::PuInfo> pus;
  std::string source;
  bool have_key = false;
  long socket_key = -1, core_key = -1;
  int socket_os = 0;
  for (const KeyLine& l : lines) {
    std::vector<int> v;
    if (l.key == "key") {
      if (l.rest != key) return bad("from another boot or CPU set");
      have_key = true;
    } else if (l.key == "source") {
      if (l.rest.empty() || l.rest.size() > 256) return bad("bad source");
      source = l.rest;
    } else if (l.key == "socket") {
      if (!pus_parse(l.rest, &v) || v.size() != 1) return bad("bad socket line");
      socket_os = v[0];
      ++socket_key;
    } else if (l.key == "core") {
      if (socket_key < 0 || !pus_parse(l.rest, &v)) return bad("bad core line");
      ++core_key;
      for (int pu : v) {
        if (pus.size() >= static_cast<size_t>(kMaxPus))
          return bad("more than " + std::to_string(kMaxPus) + " PUs");
        pus.push_back({pu, socket_key, socket_os, core_key});
      }
    } else {
      return bad("line " + std::to_string(l.lineno));
    }
  }
  if (!have_key || source.empty()) return bad("no key or source");
  // The same grouping every backend's result goes through (PUs listed twice are refused).
  return internal::machine_build(std::move(pus), source, out, err);
}

}  // namespace pw::topo
