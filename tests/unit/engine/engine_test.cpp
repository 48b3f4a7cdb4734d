// examples/engine computes what naive loops over the same model compute (same seeded
// weights and inputs), for every inter-op / intra-op setting, on small generated graphs
// covering each supported op and on the GoogLeNet fixture (stripped weights, seeded).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "examples/engine/model.h"
#include "examples/engine/pwengine.h"

namespace {

using pwe::Model;
using pwe::Op;
using pwe::Tensor;

// ---------------------------------------------------------------- reference

Tensor conv(const Op& op, const Tensor& x, const Tensor& w, const Tensor* b,
            const std::vector<int64_t>& yd) {
  Tensor y{yd, std::vector<float>(static_cast<size_t>(pwe::numel(yd)))};
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const int64_t O = yd[1], OH = yd[2], OW = yd[3], KH = op.kernel[0], KW = op.kernel[1];
  const int64_t G = op.group, CG = C / G, OG = O / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b ? b->data[static_cast<size_t>(o)] : 0.0;
          const int64_t g = o / OG;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * op.strides[0] - op.pads[0] + kh * op.dilations[0];
                const int64_t iw = ow * op.strides[1] - op.pads[1] + kw * op.dilations[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc +=
                    double(x.data[static_cast<size_t>(((n * C + g * CG + c) * H + ih) * W + iw)]) *
                    w.data[static_cast<size_t>(((o * CG + c) * KH + kh) * KW + kw)];
              }
          y.data[static_cast<size_t>(((n * O + o) * OH + oh) * OW + ow)] = static_cast<float>(acc);
        }
  return y;
}

Tensor pool(const Op& op, const Tensor& x, const std::vector<int64_t>& yd, bool global) {
  Tensor y{yd, std::vector<float>(static_cast<size_t>(pwe::numel(yd)))};
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3], OH = yd[2], OW = yd[3];
  const int64_t KH = global ? H : op.kernel[0], KW = global ? W : op.kernel[1];
  const int64_t SH = global ? 1 : op.strides[0], SW = global ? 1 : op.strides[1];
  const int64_t PT = global ? 0 : op.pads[0], PL = global ? 0 : op.pads[1];
  const bool is_max = op.type == "MaxPool";
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = is_max ? -INFINITY : 0;
          int64_t cnt = 0;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ih = oh * SH - PT + kh, iw = ow * SW - PL + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                if (op.count_include_pad && !global) ++cnt;
                continue;
              }
              const double v = x.data[static_cast<size_t>(((n * C + c) * H + ih) * W + iw)];
              acc = is_max ? std::max(acc, v) : acc + v;
              ++cnt;
            }
          y.data[static_cast<size_t>(((n * C + c) * OH + oh) * OW + ow)] =
              static_cast<float>(is_max ? acc : acc / double(cnt));
        }
  return y;
}

// Multi-index helpers for the N-D reference ops: one element at a time, no strides tricks.
std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& d) {
  std::vector<int64_t> idx(d.size());
  for (size_t k = d.size(); k-- > 0;) {
    idx[k] = i % d[k];
    i /= d[k];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& d) {
  int64_t i = 0;
  for (size_t k = 0; k < d.size(); ++k) i = i * d[k] + idx[k];
  return i;
}

// The element of t that output index idx (of rank yd.size()) reads under broadcasting.
float bcast_at(const Tensor& t, const std::vector<int64_t>& idx) {
  std::vector<int64_t> own(t.dims.size());
  const size_t off = idx.size() - t.dims.size();
  for (size_t k = 0; k < t.dims.size(); ++k) own[k] = t.dims[k] == 1 ? 0 : idx[off + k];
  return t.data[static_cast<size_t>(ravel(own, t.dims))];
}

Tensor matmul_nd(const Tensor& a, const Tensor& b, const std::vector<int64_t>& yd) {
  Tensor y{yd, std::vector<float>(static_cast<size_t>(pwe::numel(yd)))};
  const int64_t K = a.dims.back();
  for (int64_t i = 0; i < pwe::numel(yd); ++i) {
    std::vector<int64_t> idx = unravel(i, yd);
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) {
      std::vector<int64_t> ia = idx, ib = idx;
      ia.back() = k;
      ib[ib.size() - 2] = k;
      if (b.dims.size() == 2) ib = {k, idx.back()};
      acc += double(bcast_at(a, ia)) * bcast_at(b, ib);
    }
    y.data[static_cast<size_t>(i)] = static_cast<float>(acc);
  }
  return y;
}

// Runs the model with naive loops; returns the named outputs.
std::vector<Tensor> reference(const Model& m, const std::vector<Tensor>& inputs) {
  std::unordered_map<std::string, Tensor> t;
  for (size_t i = 0; i < m.inputs.size(); ++i) t[m.inputs[i].name] = inputs[i];
  auto get = [&](const std::string& n) -> const Tensor& {
    auto it = t.find(n);
    if (it != t.end()) return it->second;
    return *m.constant(n);
  };
  for (const Op& op : m.ops) {
    const std::vector<int64_t>& yd = m.tensor_dims[static_cast<size_t>(m.tensor(op.outputs[0]))];
    const Tensor& x = get(op.inputs[0]);
    Tensor y{yd, std::vector<float>(static_cast<size_t>(pwe::numel(yd)))};
    if (op.type == "Conv") {
      y = conv(op, x, get(op.inputs[1]), op.inputs.size() > 2 ? &get(op.inputs[2]) : nullptr, yd);
    } else if (op.type == "MaxPool" || op.type == "AveragePool" || op.type == "GlobalAveragePool") {
      y = pool(op, x, yd, op.type == "GlobalAveragePool");
    } else if (op.type == "Relu") {
      for (size_t k = 0; k < y.data.size(); ++k) y.data[k] = std::max(0.f, x.data[k]);
    } else if (op.type == "Sigmoid" || op.type == "Tanh" || op.type == "Erf" || op.type == "Sqrt" ||
               op.type == "Clip") {
      for (size_t k = 0; k < y.data.size(); ++k) {
        const double v = x.data[k];
        y.data[k] = static_cast<float>(op.type == "Sigmoid" ? 1 / (1 + std::exp(-v))
                                       : op.type == "Tanh"  ? std::tanh(v)
                                       : op.type == "Erf"   ? std::erf(v)
                                       : op.type == "Sqrt"
                                           ? std::sqrt(v)
                                           : std::min<double>(std::max<double>(v, op.lo), op.hi));
      }
    } else if (op.type == "Add" || op.type == "Sub" || op.type == "Mul" || op.type == "Div" ||
               op.type == "Pow") {
      const Tensor& b = get(op.inputs[1]);
      for (int64_t i = 0; i < pwe::numel(yd); ++i) {
        const std::vector<int64_t> idx = unravel(i, yd);
        const double u = bcast_at(x, idx), v = bcast_at(b, idx);
        y.data[static_cast<size_t>(i)] = static_cast<float>(op.type == "Add"   ? u + v
                                                            : op.type == "Sub" ? u - v
                                                            : op.type == "Mul" ? u * v
                                                            : op.type == "Div" ? u / v
                                                                               : std::pow(u, v));
      }
    } else if (op.type == "BatchNormalization") {
      const int64_t C = x.dims[1], inner = pwe::numel(x.dims) / x.dims[0] / C;
      for (size_t k = 0; k < y.data.size(); ++k) {
        const size_t c = static_cast<size_t>((static_cast<int64_t>(k) / inner) % C);
        y.data[k] =
            static_cast<float>((x.data[k] - get(op.inputs[3]).data[c]) /
                                   std::sqrt(double(get(op.inputs[4]).data[c]) + op.epsilon) *
                                   get(op.inputs[1]).data[c] +
                               get(op.inputs[2]).data[c]);
      }
    } else if (op.type == "Softmax" || op.type == "ReduceMean") {
      // Both over groups of elements that differ only on the reduced axes.
      std::vector<int64_t> axes = op.axes;
      if (op.type == "Softmax") axes = {op.axis};
      std::vector<int64_t> kd = x.dims;
      for (int64_t a : axes) kd[static_cast<size_t>(a)] = 1;
      std::vector<double> sum(static_cast<size_t>(pwe::numel(kd)), 0.0), mx(sum.size(), -INFINITY);
      std::vector<int64_t> group(x.data.size());
      for (int64_t i = 0; i < pwe::numel(x.dims); ++i) {
        std::vector<int64_t> idx = unravel(i, x.dims);
        for (int64_t a : axes) idx[static_cast<size_t>(a)] = 0;
        group[static_cast<size_t>(i)] = ravel(idx, kd);
        double& top = mx[static_cast<size_t>(group[static_cast<size_t>(i)])];
        top = std::max(top, double(x.data[static_cast<size_t>(i)]));
      }
      for (size_t i = 0; i < x.data.size(); ++i)
        sum[static_cast<size_t>(group[i])] +=
            op.type == "Softmax" ? std::exp(x.data[i] - mx[static_cast<size_t>(group[i])])
                                 : x.data[i];
      if (op.type == "Softmax") {
        for (size_t i = 0; i < x.data.size(); ++i)
          y.data[i] = static_cast<float>(std::exp(x.data[i] - mx[static_cast<size_t>(group[i])]) /
                                         sum[static_cast<size_t>(group[i])]);
      } else {
        const double n = double(pwe::numel(x.dims)) / double(sum.size());
        for (size_t g = 0; g < sum.size(); ++g) y.data[g] = static_cast<float>(sum[g] / n);
      }
    } else if (op.type == "Transpose") {
      for (int64_t i = 0; i < pwe::numel(yd); ++i) {
        const std::vector<int64_t> idx = unravel(i, yd);
        std::vector<int64_t> src(idx.size());
        for (size_t k = 0; k < idx.size(); ++k) src[static_cast<size_t>(op.perm[k])] = idx[k];
        y.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(ravel(src, x.dims))];
      }
    } else if (op.type == "Slice") {
      for (int64_t i = 0; i < pwe::numel(yd); ++i) {
        std::vector<int64_t> idx = unravel(i, yd);
        for (size_t k = 0; k < idx.size(); ++k) idx[k] = op.starts[k] + idx[k] * op.steps[k];
        y.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(ravel(idx, x.dims))];
      }
    } else if (op.type == "Flatten" || op.type == "Identity" || op.type == "Dropout" ||
               op.type == "Reshape" || op.type == "Squeeze" || op.type == "Unsqueeze" ||
               op.type == "Cast") {
      y.data = x.data;
    } else if (op.type == "Concat") {
      int64_t outer = 1, inner_y = 1;
      for (int64_t k = 0; k < op.axis; ++k) outer *= yd[static_cast<size_t>(k)];
      for (size_t k = static_cast<size_t>(op.axis); k < yd.size(); ++k) inner_y *= yd[k];
      int64_t off = 0;
      for (const std::string& n : op.inputs) {
        const Tensor& s = get(n);
        const int64_t inner = pwe::numel(s.dims) / outer;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t k = 0; k < inner; ++k)
            y.data[static_cast<size_t>(o * inner_y + off + k)] =
                s.data[static_cast<size_t>(o * inner + k)];
        off += inner;
      }
    } else if (op.type == "MatMul") {
      y = matmul_nd(x, get(op.inputs[1]), yd);
    } else if (op.type == "Gemm") {
      const Tensor& w = get(op.inputs[1]);
      const int64_t M = x.dims[0], K = x.dims[1], N = yd[1];
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += double(x.data[static_cast<size_t>(i * K + k)]) *
                   w.data[static_cast<size_t>(op.trans_b ? j * K + k : k * N + j)];
          acc *= op.alpha;
          if (op.type == "Gemm" && op.inputs.size() > 2)
            acc += op.beta * get(op.inputs[2]).data[static_cast<size_t>(j)];
          y.data[static_cast<size_t>(i * N + j)] = static_cast<float>(acc);
        }
    } else if (op.type == "Gather") {
      const Tensor& ids = get(op.inputs[1]);
      const size_t a = static_cast<size_t>(op.axis), r = ids.dims.size();
      for (int64_t i = 0; i < pwe::numel(yd); ++i) {
        const std::vector<int64_t> idx = unravel(i, yd);
        std::vector<int64_t> src(idx.begin(), idx.begin() + static_cast<long>(a));
        const std::vector<int64_t> which(idx.begin() + static_cast<long>(a),
                                         idx.begin() + static_cast<long>(a + r));
        src.push_back(static_cast<int64_t>(ids.data[static_cast<size_t>(ravel(which, ids.dims))]));
        src.insert(src.end(), idx.begin() + static_cast<long>(a + r), idx.end());
        y.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(ravel(src, x.dims))];
      }
    } else if (op.type == "Pad") {
      const auto& d = x.dims;
      const auto& p = op.pads;
      for (int64_t n = 0; n < d[0]; ++n)
        for (int64_t c = 0; c < d[1]; ++c)
          for (int64_t h = 0; h < d[2]; ++h)
            for (int64_t w = 0; w < d[3]; ++w)
              y.data[static_cast<size_t>(
                  (((n + p[0]) * yd[1] + c + p[1]) * yd[2] + h + p[2]) * yd[3] + w + p[3])] =
                  x.data[static_cast<size_t>(((n * d[1] + c) * d[2] + h) * d[3] + w)];
    } else {
      ADD_FAILURE() << "reference lacks " << op.type;
    }
    t[op.outputs[0]] = std::move(y);
  }
  std::vector<Tensor> out;
  for (const std::string& o : m.outputs) out.push_back(t[o]);
  return out;
}

// ---------------------------------------------------------------- harness

void expect_engine_matches_reference(const std::string& bytes, int batch, int image_size,
                                     const std::vector<std::pair<int, int>>& settings) {
  pwe::LoadOptions lo;
  lo.batch = batch;
  lo.image_size = image_size;
  lo.seed = 7;
  Model m;
  std::string err;
  ASSERT_TRUE(pwe::model_load_bytes(bytes.data(), bytes.size(), lo, &m, &err)) << err;
  const std::vector<Tensor> want = reference(m, pwe::model_make_inputs(m, 7));
  for (auto [inter, intra] : settings) {
    SCOPED_TRACE("inter " + std::to_string(inter) + " intra " + std::to_string(intra));
    pwe_session_options* o = pwe_session_options_new();
    pwe_session_options_set_inter_op_threads(o, inter);
    pwe_session_options_set_intra_op_threads(o, intra);
    pwe_session_options_set_batch(o, batch);
    pwe_session_options_set_image_size(o, image_size);
    pwe_session_options_set_seed(o, 7);
    char e[512];
    pwe_session* s = pwe_session_new(bytes.data(), bytes.size(), o, e, sizeof e);
    pwe_session_options_free(o);
    ASSERT_NE(s, nullptr) << e;
    EXPECT_EQ(pwe_session_inter_op_threads(s), inter);
    EXPECT_EQ(pwe_session_intra_op_threads(s), intra);
    for (int rep = 0; rep < 2; ++rep) {  // a second run reuses every buffer
      ASSERT_EQ(pwe_session_run(s, e, sizeof e), 0) << e;
      ASSERT_EQ(pwe_session_num_outputs(s), static_cast<int>(want.size()));
      for (size_t i = 0; i < want.size(); ++i) {
        const float* d = nullptr;
        size_t n = 0;
        int rank = 0;
        int64_t dims[8];
        ASSERT_EQ(pwe_session_output(s, static_cast<int>(i), &d, &n, &rank, dims), 0);
        ASSERT_EQ(n, want[i].data.size());
        ASSERT_EQ(std::vector<int64_t>(dims, dims + rank), want[i].dims);
        double scale = 1e-6;
        for (float v : want[i].data) scale = std::max(scale, double(std::fabs(v)));
        for (size_t k = 0; k < n; ++k)
          ASSERT_NEAR(d[k], want[i].data[k], 1e-4 * scale) << "output " << i << " element " << k;
      }
    }
    pwe_session_free(s);
  }
}

const std::vector<std::pair<int, int>> kSettings = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {3, 2}, {4, 1}};

// Every op the JSON path supports, in a small DAG with parallel branches.
const char kMixed[] = R"({
  "name": "mixed", "framework": "onnx",
  "inputs": [{"name": "x", "shape": [2, 3, 12, 12]}, {"name": "ids", "shape": [2, 3]}],
  "tensors": [{"name": "emb", "shape": [50, 4]}], "constants": ["emb"],
  "nodes": [
    {"name": "c0", "op": "Conv", "inputs": ["x"], "attrs": {"channels": 8, "kernel": 3, "pad": 1}},
    {"name": "r0", "op": "Relu", "inputs": ["c0"]},
    {"name": "a1", "op": "Conv", "inputs": ["r0"], "attrs": {"channels": 6, "kernel": 1}},
    {"name": "b1", "op": "Conv", "inputs": ["r0"], "attrs": {"channels": 6, "kernel": 3, "pad": 1, "bias": false}},
    {"name": "b2", "op": "Conv", "inputs": ["b1"], "attrs": {"channels": 6, "kernel": [5, 3], "pad": [2, 1, 2, 1]}},
    {"name": "s1", "op": "Add", "inputs": ["a1", "b2"]},
    {"name": "p1", "op": "MaxPool", "inputs": ["r0"], "attrs": {"kernel": 3, "stride": 2, "pad": 1}},
    {"name": "p2", "op": "AveragePool", "inputs": ["s1"], "attrs": {"kernel": 2, "stride": 2}},
    {"name": "p3", "op": "AveragePool", "inputs": ["s1"], "attrs": {"kernel": 3, "stride": 2, "pad": 1, "count_include_pad": 1}},
    {"name": "cat", "op": "Concat", "inputs": ["p1", "p2", "p3"], "attrs": {"axis": 1}},
    {"name": "c2", "op": "Conv", "inputs": ["cat"], "attrs": {"channels": 10, "kernel": 3, "stride": 2, "pad": 1}},
    {"name": "gap", "op": "GlobalAveragePool", "inputs": ["c2"]},
    {"name": "flat", "op": "Flatten", "inputs": ["gap"]},
    {"name": "g", "op": "Gather", "inputs": ["emb", "ids"]},
    {"name": "gflat", "op": "Flatten", "inputs": ["g"]},
    {"name": "feat", "op": "Concat", "inputs": ["flat", "gflat"], "attrs": {"axis": 1}},
    {"name": "fc1", "op": "MatMul", "inputs": ["feat"], "attrs": {"units": 16}},
    {"name": "fc1r", "op": "Relu", "inputs": ["fc1"]},
    {"name": "fc2", "op": "MatMul", "inputs": ["fc1r"], "attrs": {"units": 5, "bias": false}}
  ]
})";

TEST(Engine, MixedGraphMatchesReferenceForEverySetting) {
  expect_engine_matches_reference(kMixed, 0, 0, kSettings);
}

TEST(Engine, BatchOverrideMatchesReference) {
  expect_engine_matches_reference(kMixed, 3, 0, {{2, 1}, {1, 2}});
}

TEST(Engine, GeneratedStyleTowersMatchReference) {
  // Three independent branches (the falsification shape), joined by a light head.
  std::string nodes;
  for (int b = 0; b < 3; ++b) {
    std::string prev = "x";
    for (int d = 0; d < (b == 0 ? 4 : 2); ++d) {
      const std::string n = "t" + std::to_string(b) + "_" + std::to_string(d);
      nodes += R"({"name": ")" + n + R"(", "op": "Conv", "inputs": [")" + prev +
               R"("], "attrs": {"channels": 4, "kernel": 3, "pad": 1}},)";
      prev = n;
    }
  }
  const std::string g = R"({"framework": "onnx", "inputs": [{"name": "x", "shape": [1, 2, 8, 8]}],
    "nodes": [)" + nodes +
                        R"({"name": "cat", "op": "Concat", "inputs": ["t0_3", "t1_1", "t2_1"]}]})";
  expect_engine_matches_reference(g, 0, 0, kSettings);
}

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Engine, GoogLeNetFixtureMatchesReference) {
  // Stripped weights are seeded; a 64x64 image keeps the naive loops short. Covers
  // ONNX attributes, ceil-mode max pooling, Identity-shared weights and Gemm.
  const std::string bytes =
      read_file(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/googlenet.onnx");
  ASSERT_FALSE(bytes.empty());
  expect_engine_matches_reference(bytes, 1, 64, {{2, 1}, {1, 2}});
}

TEST(Engine, InceptionV3FixtureMatchesReference) {
  // Pad + AveragePool, asymmetric kernels (1x7, 7x1): the reference on a 75x75 image.
  const std::string bytes =
      read_file(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/inception_v3.onnx");
  ASSERT_FALSE(bytes.empty());
  expect_engine_matches_reference(bytes, 1, 75, {{2, 1}});
}

TEST(Engine, OperatorCornersMatchReferenceForEverySetting) {
  // tests/fixtures/gen/gen_onnx.py's Ops: BatchNormalization on 3-D, Erf/Tanh/Sigmoid, a Sub
  // whose first operand broadcasts, Gather on axis 1 with run-time ids, strided Slice, Concat
  // on axis 2, batched MatMul broadcasting its batch dims, Softmax on axis 1, ReduceMean
  // without keepdims, Pow with a tensor exponent, Clip, Unsqueeze/Squeeze, N-D x 2-D MatMul.
  const std::string bytes =
      read_file(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/engine_ops.onnx");
  ASSERT_FALSE(bytes.empty());
  expect_engine_matches_reference(bytes, 0, 0, kSettings);
}

// The model families of the bench (tests/fixtures/gen/gen_onnx.py, stripped weights):
// small images keep the naive loops at a few seconds. ShuffleNet and the encoder reshape to
// sizes fixed at export, so they run at theirs (224x224; 16 tokens of 64).
struct Family {
  const char* file;
  int image_size;
  bool heavy;  // the naive reference takes a minute or more unoptimised (ASan/UBSan build)
};

#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
constexpr bool kUnoptimised = true;
#else
constexpr bool kUnoptimised = false;
#endif

class Families : public ::testing::TestWithParam<Family> {};

TEST_P(Families, MatchReference) {
  if (GetParam().heavy && kUnoptimised)
    GTEST_SKIP() << "the naive reference is too slow unoptimised; the Release build checks it";
  const std::string bytes =
      read_file(std::string(PW_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam().file);
  ASSERT_FALSE(bytes.empty());
  expect_engine_matches_reference(bytes, 1, GetParam().image_size, {{2, 1}, {1, 2}});
}

INSTANTIATE_TEST_SUITE_P(
    Engine, Families,
    ::testing::Values(Family{"densenet121.onnx", 32, true}, Family{"mobilenet_v2.onnx", 32, false},
                      Family{"shufflenet_v2_x1_0.onnx", 0, true}, Family{"resnet50.onnx", 32, true},
                      Family{"vgg16.onnx", 32, true}, Family{"squeezenet1_0.onnx", 64, false},
                      Family{"transformer_encoder.onnx", 0, false},
                      Family{"wide_deep.onnx", 0, false}),
    [](const ::testing::TestParamInfo<Family>& i) {
      std::string n = i.param.file;
      n = n.substr(0, n.find('.'));
      for (char& c : n)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(Engine, UnsupportedOpIsNamed) {
  const char g[] = R"({"inputs": [{"name": "x", "shape": [1, 4]}],
    "nodes": [{"name": "s", "op": "LSTM", "inputs": ["x"]}]})";
  char e[256] = "";
  pwe_session* s = pwe_session_new(g, sizeof g - 1, nullptr, e, sizeof e);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(e).find("LSTM"), std::string::npos) << e;
}

TEST(Engine, DefaultsAreEveryLogicalCpu) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  char e[256];
  pwe_session* s = pwe_session_new(kMixed, sizeof kMixed - 1, nullptr, e, sizeof e);
  ASSERT_NE(s, nullptr) << e;
  EXPECT_EQ(pwe_session_inter_op_threads(s), CPU_COUNT(&set));
  EXPECT_EQ(pwe_session_intra_op_threads(s), CPU_COUNT(&set));
  size_t n = 0;
  const void* g = pwe_session_graph(s, &n);
  ASSERT_EQ(n, sizeof kMixed - 1);  // the bytes a hook reads back
  EXPECT_EQ(std::string(static_cast<const char*>(g), n), std::string(kMixed));
  pwe_session_free(s);
}

}  // namespace
