// examples/engine/session_build: a session's operators as oneDNN primitives (weights
// reordered once into the layouts they prefer), copies, or the plain loops of kernels.h.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cstring>

#include "examples/engine/kernels.h"
#include "examples/engine/session.h"

namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

memory::dims to_dims(const std::vector<int64_t>& d) {
  return memory::dims(d.begin(), d.end());
}

tag plain(size_t rank) {
  switch (rank) {
    case 1:
      return tag::a;
    case 2:
      return tag::ab;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    default:
      return tag::abcdef;
  }
}

memory::dims strides_of(const std::vector<int64_t>& d) {
  memory::dims s(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
  return s;
}

// d with leading 1s up to rank r (numpy broadcasting aligns on the right).
std::vector<int64_t> padded(const std::vector<int64_t>& d, size_t r) {
  std::vector<int64_t> p(r - std::min(r, d.size()), 1);
  p.insert(p.end(), d.begin(), d.end());
  return p;
}

}  // namespace

memory pwe_session::const_memory(const std::string& name, const memory::desc& want) {
  const pwe::Tensor* t = model.constant(name);
  memory::desc src_md(to_dims(t->dims), dt::f32, plain(t->dims.size()));
  memory src(src_md, eng, const_cast<float*>(t->data.data()));
  if (want.get_size() == src_md.get_size() && want == src_md) {
    weights.push_back(src);
    return src;
  }
  memory dst(want, eng);
  dnnl::stream s(eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  weights.push_back(dst);
  return dst;
}

memory::desc pwe_session::md(int t) const {
  const auto& d = model.tensor_dims[static_cast<size_t>(t)];
  return memory::desc(to_dims(d), dt::f32, plain(d.size()));
}

void pwe_session::finish(Exec* e, const dnnl::primitive_desc_base& pd) {
  const memory::desc sd = pd.scratchpad_desc();
  if (sd.get_size() > 0) {
    e->scratch = memory(sd, eng);
    e->args[DNNL_ARG_SCRATCHPAD] = e->scratch;
  }
}

// The data of a tensor or a constant, by name.
const float* pwe_session::ptr(const std::string& n) const {
  const int t = model.tensor(n);
  return t >= 0 ? buf[static_cast<size_t>(t)].data() : model.constant(n)->data.data();
}
const std::vector<int64_t>& pwe_session::dims(const std::string& n) const {
  const int t = model.tensor(n);
  return t >= 0 ? model.tensor_dims[static_cast<size_t>(t)] : model.constant(n)->dims;
}
// A plain oneDNN view of a tensor's or constant's buffer with the given dims.
memory pwe_session::view(const std::string& n, const std::vector<int64_t>& d) {
  const std::vector<int64_t> dd = d.empty() ? std::vector<int64_t>{1} : d;
  return memory(memory::desc(to_dims(dd), dt::f32, plain(dd.size())), eng,
                const_cast<float*>(ptr(n)));
}

void pwe_session::eltwise(Exec* e, const dnnl::primitive_attr& attr, const pwe::Op& op,
                          dnnl::algorithm alg, float alpha, float beta) {
  memory x = view(op.inputs[0], dims(op.inputs[0]));
  memory y = view(op.outputs[0], dims(op.outputs[0]));
  dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, x.get_desc(), alpha, beta);
  dnnl::eltwise_forward::primitive_desc pd(d, attr, eng);
  e->prim = dnnl::eltwise_forward(pd);
  e->args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
  finish(e, pd);
}

// Add/Sub/Mul/Div: oneDNN's binary where src0 has the output's shape (src1 may
// broadcast), a plain loop otherwise (and for Pow).
void pwe_session::binary(Exec* e, const dnnl::primitive_attr& attr, const pwe::Op& op) {
  const std::string& t = op.type;
  const std::vector<int64_t>& yd = dims(op.outputs[0]);
  std::string a = op.inputs[0], b = op.inputs[1];
  if (padded(dims(a), yd.size()) != yd && (t == "Add" || t == "Mul") &&
      padded(dims(b), yd.size()) == yd)
    std::swap(a, b);
  if (t != "Pow" && padded(dims(a), yd.size()) == yd) {
    const dnnl::algorithm alg = t == "Add"   ? dnnl::algorithm::binary_add
                                : t == "Sub" ? dnnl::algorithm::binary_sub
                                : t == "Mul" ? dnnl::algorithm::binary_mul
                                             : dnnl::algorithm::binary_div;
    memory ma = view(a, yd), mb = view(b, padded(dims(b), yd.size())), my = view(op.outputs[0], yd);
    try {
      dnnl::binary::desc d(alg, ma.get_desc(), mb.get_desc(), my.get_desc());
      dnnl::binary::primitive_desc pd(d, attr, eng);
      e->prim = dnnl::binary(pd);
      e->args = {{DNNL_ARG_SRC_0, ma}, {DNNL_ARG_SRC_1, mb}, {DNNL_ARG_DST, my}};
      finish(e, pd);
      return;
    } catch (const dnnl::error&) {  // a broadcast this oneDNN lacks: the loop below
    }
  }
  const pwe::Binary k = t == "Add"   ? pwe::Binary::kAdd
                        : t == "Sub" ? pwe::Binary::kSub
                        : t == "Mul" ? pwe::Binary::kMul
                        : t == "Div" ? pwe::Binary::kDiv
                                     : pwe::Binary::kPow;
  e->kind = Exec::kFn;
  e->fn = [k, pa = ptr(op.inputs[0]), da = dims(op.inputs[0]), pb = ptr(op.inputs[1]),
           db = dims(op.inputs[1]), py = const_cast<float*>(ptr(op.outputs[0])),
           yd] { pwe::binary_broadcast(k, pa, da, pb, db, py, yd, false); };
}

void pwe_session::matmul(Exec* e, const pwe::Op& op) {
  const std::string& t = op.type;
  const std::vector<int64_t>& xd = dims(op.inputs[0]);
  const std::vector<int64_t>& yd = dims(op.outputs[0]);
  const pwe::Tensor* w = model.constant(op.inputs[1]);
  dnnl::primitive_attr mattr;
  mattr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (!w || w->dims.size() != 2) {  // both operands at run time, batched
    const size_t r = yd.size();
    memory a = view(op.inputs[0], padded(xd, r)),
           b = view(op.inputs[1], padded(dims(op.inputs[1]), r)), y = view(op.outputs[0], yd);
    dnnl::matmul::desc d(a.get_desc(), b.get_desc(), y.get_desc());
    dnnl::matmul::primitive_desc pd(d, mattr, eng);
    e->prim = dnnl::matmul(pd);
    e->args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, y}};
    finish(e, pd);
    return;
  }
  // Constant 2-D B: rows of x (every leading dim folded) times B.
  const int64_t n = yd.back(), k = xd.back(), m = pwe::numel(xd) / k;
  memory x = view(op.inputs[0], {m, k}), y = view(op.outputs[0], {m, n});
  // B as [K, N]: a transposed view of a [N, K] constant is the "ba" layout.
  memory::desc b_user({k, n}, dt::f32, op.trans_b ? tag::ba : tag::ab);
  const bool has_bias = t == "Gemm" && op.inputs.size() > 2 && !op.inputs[2].empty();
  memory::desc bmd = has_bias ? memory::desc({1, n}, dt::f32, tag::ab) : memory::desc();
  const bool scaled = op.alpha != 1.f;
  if (scaled) mattr.set_output_scales(0, {op.alpha});
  dnnl::matmul::desc d(x.get_desc(), memory::desc({k, n}, dt::f32, tag::any), bmd, y.get_desc());
  dnnl::matmul::primitive_desc pd(d, mattr, eng);
  e->prim = dnnl::matmul(pd);
  e->args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
  memory bsrc(b_user, eng, const_cast<float*>(w->data.data()));
  memory bdst(pd.weights_desc(), eng);
  dnnl::stream s(eng);
  dnnl::reorder(bsrc, bdst).execute(s, bsrc, bdst);
  s.wait();
  weights.push_back(bdst);
  e->args[DNNL_ARG_WEIGHTS] = bdst;
  if (has_bias) {
    // beta scales the bias (ONNX Gemm: alpha*A*B + beta*C); alpha scales both in
    // oneDNN's output scale, so the bias is pre-divided by alpha.
    const pwe::Tensor* b = model.constant(op.inputs[2]);
    memory bm(bmd, eng);
    float* p = static_cast<float*>(bm.get_data_handle());
    for (int64_t j = 0; j < n; ++j)
      p[j] = b->data[static_cast<size_t>(j)] * op.beta / (scaled ? op.alpha : 1.f);
    weights.push_back(bm);
    e->args[DNNL_ARG_BIAS] = bm;
  }
  finish(e, pd);
}

bool pwe_session::build(uint64_t seed, std::string* err) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const size_t nt = model.tensor_names.size();
  buf.resize(nt);
  mem.resize(nt);
  for (size_t t = 0; t < nt; ++t) {
    buf[t].assign(static_cast<size_t>(pwe::numel(model.tensor_dims[t])), 0.f);
    mem[t] = memory(md(static_cast<int>(t)), eng, buf[t].data());
  }
  // Inputs are the first tensors; their buffers never move (ops keep raw pointers).
  std::vector<pwe::Tensor> in = pwe::model_make_inputs(model, seed);
  for (size_t i = 0; i < in.size(); ++i)
    memcpy(buf[i].data(), in[i].data.data(), buf[i].size() * sizeof(float));
  ops.resize(model.ops.size());
  op_ms.assign(model.ops.size(), 0.0);
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const pwe::Op& op = model.ops[i];
    Exec& e = ops[i];
    for (int p : op.preds) ops[static_cast<size_t>(p)].succ.push_back(static_cast<int>(i));
    const int y = model.tensor(op.outputs[0]);
    const int x = model.tensor(op.inputs[0]);  // -1 for a constant
    const std::string& t = op.type;
    auto pads_l = [&] { return memory::dims{op.pads[0], op.pads[1]}; };
    auto pads_r = [&] { return memory::dims{op.pads[2], op.pads[3]}; };
    if (t == "Conv") {
      const pwe::Tensor* w = model.constant(op.inputs[1]);
      memory::dims wd = to_dims(w->dims);
      if (op.group > 1) {
        wd = {op.group, w->dims[0] / op.group, w->dims[1], w->dims[2], w->dims[3]};
      }
      const bool has_bias = op.inputs.size() > 2 && !op.inputs[2].empty();
      memory::desc wmd(wd, dt::f32, tag::any);
      memory::desc bmd = has_bias ? memory::desc({w->dims[0]}, dt::f32, tag::a) : memory::desc();
      dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, md(x), wmd, bmd,
          md(y), {op.strides[0], op.strides[1]}, {op.dilations[0] - 1, op.dilations[1] - 1},
          pads_l(), pads_r());
      dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
      e.prim = dnnl::convolution_forward(pd);
      e.args = {{DNNL_ARG_SRC, mem[x]}, {DNNL_ARG_DST, mem[y]}};
      // Grouped weights: the same data viewed with a leading group dim.
      pwe::Tensor* wt = const_cast<pwe::Tensor*>(w);
      if (op.group > 1) wt->dims = std::vector<int64_t>(wd.begin(), wd.end());
      e.args[DNNL_ARG_WEIGHTS] = const_memory(op.inputs[1], pd.weights_desc());
      if (has_bias) e.args[DNNL_ARG_BIAS] = const_memory(op.inputs[2], bmd);
      finish(&e, pd);
    } else if (t == "MaxPool" && x >= 0 && dims(op.inputs[0]).size() == 4) {
      // Not oneDNN's pooling: on plain layouts that is its reference loop (kernels.h).
      e.kind = Exec::kFn;
      e.fn = [px = ptr(op.inputs[0]), xd = dims(op.inputs[0]),
              k = std::array<int64_t, 2>{op.kernel[0], op.kernel[1]},
              st = std::array<int64_t, 2>{op.strides[0], op.strides[1]},
              pl = std::array<int64_t, 2>{op.pads[0], op.pads[1]},
              py = buf[static_cast<size_t>(y)].data(),
              yd = model.tensor_dims[static_cast<size_t>(y)]] {
        pwe::max_pool(px, xd, k.data(), st.data(), pl.data(), py, yd);
      };
    } else if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool") {
      dnnl::algorithm alg = t == "MaxPool"         ? dnnl::algorithm::pooling_max
                            : op.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                   : dnnl::algorithm::pooling_avg_exclude_padding;
      memory::dims k, s, pl, pr;
      if (t == "GlobalAveragePool") {
        const auto& xd = model.tensor_dims[static_cast<size_t>(x)];
        k = {xd[2], xd[3]}, s = {1, 1}, pl = {0, 0}, pr = {0, 0};
      } else {
        k = {op.kernel[0], op.kernel[1]}, s = {op.strides[0], op.strides[1]}, pl = pads_l(),
        pr = pads_r();
      }
      dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, md(x), md(y), s, k, pl,
                                    pr);
      dnnl::pooling_forward::primitive_desc pd(d, attr, eng);
      e.prim = dnnl::pooling_forward(pd);
      e.args = {{DNNL_ARG_SRC, mem[x]}, {DNNL_ARG_DST, mem[y]}};
      finish(&e, pd);
    } else if (t == "Relu") {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    } else if (t == "Sigmoid") {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
    } else if (t == "Tanh") {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_tanh, 0.f, 0.f);
    } else if (t == "Sqrt") {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_sqrt, 0.f, 0.f);
    } else if (t == "Clip") {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_clip_v2, std::max(op.lo, -FLT_MAX),
              std::min(op.hi, FLT_MAX));
    } else if (t == "Pow" && model.constant(op.inputs[1]) &&
               model.constant(op.inputs[1])->data.size() == 1 &&
               dims(op.inputs[0]) == dims(op.outputs[0])) {
      eltwise(&e, attr, op, dnnl::algorithm::eltwise_pow, 1.f,
              model.constant(op.inputs[1])->data[0]);
    } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow") {
      binary(&e, attr, op);
    } else if (t == "Erf") {
      e.kind = Exec::kFn;
      e.fn = [px = ptr(op.inputs[0]), n = pwe::numel(dims(op.inputs[0])),
              py = buf[static_cast<size_t>(y)].data()] { pwe::erf(px, n, py); };
    } else if (t == "BatchNormalization") {
      memory xm = view(op.inputs[0], dims(op.inputs[0]));
      dnnl::batch_normalization_forward::desc d(
          dnnl::prop_kind::forward_inference, xm.get_desc(), op.epsilon,
          dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
              dnnl::normalization_flags::use_shift);
      dnnl::batch_normalization_forward::primitive_desc pd(d, attr, eng);
      e.prim = dnnl::batch_normalization_forward(pd);
      const int64_t c = dims(op.inputs[0])[1];
      e.args = {{DNNL_ARG_SRC, xm},
                {DNNL_ARG_DST, view(op.outputs[0], dims(op.outputs[0]))},
                {DNNL_ARG_SCALE, view(op.inputs[1], {c})},
                {DNNL_ARG_SHIFT, view(op.inputs[2], {c})},
                {DNNL_ARG_MEAN, view(op.inputs[3], {c})},
                {DNNL_ARG_VARIANCE, view(op.inputs[4], {c})}};
      finish(&e, pd);
    } else if (t == "Softmax") {
      memory xm = view(op.inputs[0], dims(op.inputs[0]));
      dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, xm.get_desc(),
                                    static_cast<int>(op.axis));
      dnnl::softmax_forward::primitive_desc pd(d, attr, eng);
      e.prim = dnnl::softmax_forward(pd);
      e.args = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, view(op.outputs[0], dims(op.outputs[0]))}};
      finish(&e, pd);
    } else if (t == "ReduceMean") {
      const std::vector<int64_t>& xd = dims(op.inputs[0]);
      std::vector<int64_t> kept = xd;  // the output with reduced dims kept as 1
      for (int64_t a : op.axes) kept[static_cast<size_t>(a)] = 1;
      memory xm = view(op.inputs[0], xd), ym = view(op.outputs[0], kept);
      dnnl::reduction::desc d(dnnl::algorithm::reduction_mean, xm.get_desc(), ym.get_desc(), 0.f,
                              0.f);
      dnnl::reduction::primitive_desc pd(d, attr, eng);
      e.prim = dnnl::reduction(pd);
      e.args = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}};
      finish(&e, pd);
    } else if (t == "Transpose") {
      // A reorder from x's buffer seen through permuted strides to y's plain layout.
      const std::vector<int64_t>& xd = dims(op.inputs[0]);
      const std::vector<int64_t>& yd = dims(op.outputs[0]);
      const memory::dims xs = strides_of(xd);
      memory::dims ps;
      for (int64_t p : op.perm) ps.push_back(xs[static_cast<size_t>(p)]);
      memory src(memory::desc(to_dims(yd), dt::f32, ps), eng,
                 const_cast<float*>(ptr(op.inputs[0])));
      memory dst = view(op.outputs[0], yd);
      dnnl::reorder::primitive_desc pd(src, dst, attr);
      e.prim = dnnl::reorder(pd);
      e.args = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
      finish(&e, pd);
    } else if (t == "Concat") {
      std::vector<memory::desc> srcs;
      std::vector<memory> ms;
      for (const std::string& n : op.inputs) {
        ms.push_back(view(n, dims(n)));
        srcs.push_back(ms.back().get_desc());
      }
      dnnl::concat::primitive_desc pd(md(y), static_cast<int>(op.axis), srcs, eng, attr);
      e.prim = dnnl::concat(pd);
      e.args = {{DNNL_ARG_DST, mem[y]}};
      for (size_t k = 0; k < ms.size(); ++k)
        e.args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k)] = ms[k];
      finish(&e, pd);
    } else if (t == "MatMul" || t == "Gemm") {
      matmul(&e, op);
    } else if (t == "Flatten" || t == "Identity" || t == "Dropout" || t == "Reshape" ||
               t == "Squeeze" || t == "Unsqueeze" || t == "Cast") {
      e.kind = Exec::kCopy;
      e.src = ptr(op.inputs[0]);
      e.dst = buf[static_cast<size_t>(y)].data();
      e.count = pwe::numel(model.tensor_dims[static_cast<size_t>(y)]);
    } else if (t == "Pad") {
      e.kind = Exec::kPad;
      e.src = buf[static_cast<size_t>(x)].data();
      e.dst = buf[static_cast<size_t>(y)].data();
      e.count = pwe::numel(model.tensor_dims[static_cast<size_t>(y)]);
      e.in_dims = model.tensor_dims[static_cast<size_t>(x)];
      e.pads = op.pads;
    } else if (t == "Gather") {
      e.kind = Exec::kFn;
      e.fn = [pd = ptr(op.inputs[0]), dd = dims(op.inputs[0]), axis = op.axis,
              pi = ptr(op.inputs[1]), n = pwe::numel(dims(op.inputs[1])),
              py = buf[static_cast<size_t>(y)].data()] { pwe::gather(pd, dd, axis, pi, n, py); };
    } else if (t == "Slice") {
      e.kind = Exec::kFn;
      e.fn = [px = ptr(op.inputs[0]), xd = dims(op.inputs[0]), st = op.starts, sp = op.steps,
              py = buf[static_cast<size_t>(y)].data(),
              yd = dims(op.outputs[0])] { pwe::slice(px, xd, st, sp, py, yd); };
    } else {
      *err = "op " + op.name + ": unsupported op type '" + t + "'";
      return false;
    }
  }
  for (const std::string& o : model.outputs) outputs.push_back(model.tensor(o));
  return true;
}
