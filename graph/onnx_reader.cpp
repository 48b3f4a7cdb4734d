// ONNX ModelProto -> Graph. Field numbers from onnx/onnx.proto (ModelProto.graph = 7;
// GraphProto node 1, initializer 5, input 11, output 12, value_info 13, sparse_initializer 15;
// NodeProto input 1, output 2, name 3, op_type 4, attribute 5, domain 7; AttributeProto
// name 1, i 3, g 6, graphs 11; TensorProto dims 1, name 8; SparseTensorProto values 1;
// ValueInfoProto name 1, type 2; TypeProto tensor_type 1; TypeProto.Tensor shape 2;
// TensorShapeProto dim 1; Dimension dim_value 1).
//
// Weights are never needed: an initializer's name and dims say all the statistics use, so
// stripped models and models with external data (data_location = EXTERNAL) read the same.
// Control-flow bodies (graph-valued attributes of If/Loop/Scan) become Graph::subgraphs;
// the values they read from the enclosing graph become edges into the control-flow node,
// so the main graph's order stays right without counting the bodies' heavy ops.
#include <unordered_map>
#include <unordered_set>

#include "graph/heavy_ops.h"
#include "graph/proto_reader.h"
#include "graph/readers.h"

namespace pw::graph {
namespace {

using proto::Field;
using proto::Reader;

constexpr size_t kMaxAttrList = 65536;  // longer attribute lists are dropped (kOther)

// Little-endian integer of `width` bytes at p, sign-extended when `sign`.
int64_t le_int(const char* p, int width, bool sign) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(static_cast<uint8_t>(p[i])) << (8 * i);
  if (sign && width < 8 && (v >> (8 * width - 1)) & 1) v |= ~uint64_t{0} << (8 * width);
  return static_cast<int64_t>(v);
}

bool is_int_type(DType t) {
  switch (t) {
    case DType::kUint8:
    case DType::kInt8:
    case DType::kUint16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kUint32:
    case DType::kUint64:
      return true;
    default:
      return false;
  }
}

// TensorProto -> name and TensorInfo (dims 1, data_type 2, int32_data 5, int64_data 7,
// name 8, raw_data 9, uint64_data 11). Integer values are kept when there are at most
// kMaxFoldedElements of them; weights are never copied.
bool onnx_tensor(std::string_view bytes, int depth, std::string* name, TensorInfo* t,
                 const char** why) {
  Reader r(bytes, depth);
  Field f;
  std::vector<int64_t> ints;
  std::string_view raw;
  bool have_raw = false, too_many = false;
  int64_t dtype = 0;
  while (r.next(&f)) {
    if (f.number == 1) {
      if (!proto::int64s_read(f, [&](int64_t v) {
            if (t->dims.size() < 1024) t->dims.push_back(v);
          })) {
        *why = "malformed tensor dims";
        return false;
      }
    } else if (f.number == 2 && f.wire == proto::kVarint) {
      dtype = static_cast<int64_t>(f.varint);
    } else if (f.number == 5 || f.number == 7 || f.number == 11) {
      if (!proto::ints_append(f, f.number == 5, kMaxFoldedElements, &ints, &too_many)) {
        *why = "malformed tensor data";
        return false;
      }
    } else if (f.number == 8 && f.wire == proto::kLen) {
      name->assign(f.bytes);
    } else if (f.number == 9 && f.wire == proto::kLen) {
      raw = f.bytes;
      have_raw = true;
    }
  }
  if (!r.ok()) {
    *why = r.error();
    return false;
  }
  for (int64_t& d : t->dims)
    if (d < 0) d = -1;
  t->rank = static_cast<int>(t->dims.size());
  t->dtype = dtype >= 0 && dtype <= 16 ? static_cast<DType>(dtype) : DType::kUnknown;
  t->constant = true;
  const int64_t n = t->elements();
  if (!is_int_type(t->dtype) || n < 0 || n > int64_t(kMaxFoldedElements) || too_many) return true;
  if (have_raw) {
    const int w = dtype_size(t->dtype);
    if (raw.size() != size_t(n) * size_t(w)) return true;
    const bool sign = t->dtype != DType::kUint8 && t->dtype != DType::kUint16 &&
                      t->dtype != DType::kUint32 && t->dtype != DType::kBool;
    for (int64_t i = 0; i < n; ++i) t->values.push_back(le_int(raw.data() + i * w, w, sign));
    t->has_values = true;
  } else if (ints.size() == size_t(n)) {
    t->values = std::move(ints);
    t->has_values = true;
  }
  return true;
}

// AttributeProto (name 1, f 2, i 3, s 4, t 5, g 6, floats 7, ints 8, strings 9, graphs 11,
// type 20) -> Attr; graph bodies are handed back for the caller to read.
bool onnx_attr(std::string_view bytes, int depth, Attr* a, std::vector<std::string_view>* graphs,
               const char** why) {
  Reader r(bytes, depth);
  Field f;
  int64_t type = 0;
  bool has_f = false, has_i = false, has_s = false, has_t = false;
  while (r.next(&f)) {
    switch (f.number) {
      case 1:
        if (f.wire == proto::kLen) a->name.assign(f.bytes);
        break;
      case 2:
        if (f.wire == proto::kFixed32) a->f = proto::fixed32_float(f), has_f = true;
        break;
      case 3:
        if (f.wire == proto::kVarint) a->i = static_cast<int64_t>(f.varint), has_i = true;
        break;
      case 4:
        if (f.wire == proto::kLen) a->s.assign(f.bytes), has_s = true;
        break;
      case 5:
        if (f.wire == proto::kLen) {
          std::string ignored;
          if (!onnx_tensor(f.bytes, depth + 1, &ignored, &a->tensor, why)) return false;
          has_t = true;
        }
        break;
      case 6:
      case 11:
        if (f.wire == proto::kLen) graphs->push_back(f.bytes);
        break;
      case 7:
        proto::floats_read(f, [&](float v) {
          if (a->floats.size() < kMaxAttrList) a->floats.push_back(v);
        });
        break;
      case 8:
        if (!proto::int64s_read(f, [&](int64_t v) {
              if (a->ints.size() < kMaxAttrList) a->ints.push_back(v);
            })) {
          *why = "malformed attribute ints";
          return false;
        }
        break;
      case 9:
        if (f.wire == proto::kLen && a->strings.size() < kMaxAttrList)
          a->strings.emplace_back(f.bytes);
        break;
      case 20:
        if (f.wire == proto::kVarint) type = static_cast<int64_t>(f.varint);
        break;
      default:
        break;
    }
  }
  if (!r.ok()) {
    *why = r.error();
    return false;
  }
  // AttributeType: FLOAT 1, INT 2, STRING 3, TENSOR 4, GRAPH 5, FLOATS 6, INTS 7, STRINGS 8,
  // GRAPHS 10.
  // Old exporters omit the type; then the field that is present decides.
  using K = Attr::Kind;
  switch (type) {
    case 1:
      a->kind = K::kFloat;
      break;
    case 2:
      a->kind = K::kInt;
      break;
    case 3:
      a->kind = K::kString;
      break;
    case 4:
      a->kind = K::kTensor;
      break;
    case 5:
    case 10:
      a->kind = K::kGraph;
      break;
    case 6:
      a->kind = K::kFloats;
      break;
    case 7:
      a->kind = K::kInts;
      break;
    case 8:
      a->kind = K::kStrings;
      break;
    default:
      a->kind = has_f                 ? K::kFloat
                : has_i               ? K::kInt
                : has_s               ? K::kString
                : has_t               ? K::kTensor
                : !graphs->empty()    ? K::kGraph
                : !a->ints.empty()    ? K::kInts
                : !a->floats.empty()  ? K::kFloats
                : !a->strings.empty() ? K::kStrings
                                      : K::kOther;
  }
  return true;
}

// Names visible in one graph; subgraphs see their ancestors' names through parent.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_set<std::string> consts;  // initializers and Constant outputs
  std::unordered_map<std::string, std::vector<int64_t>> shapes;

  bool is_const(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->consts.count(n)) return true;
    return false;
  }
  const std::vector<int64_t>* shape(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->shapes.find(n);
      if (it != s->shapes.end()) return &it->second;
    }
    return nullptr;
  }
};

struct RawNode {
  Node node;
  int64_t trans_a = 0;
  std::vector<std::string> implicit;  // outer names read by this node's subgraphs
};

class OnnxReader {
 public:
  OnnxReader(Graph* top, std::string* err) : top_(top), err_(err) {}

  bool graph(std::string_view bytes, int depth, const Scope* parent, const std::string& name,
             Graph* g, std::unordered_set<std::string>* free_names);
  Status status() const { return status_; }

 private:
  bool bad(const std::string& why, Status s = Status::kBadFormat) {
    if (status_ == Status::kOk) {
      status_ = s;
      if (err_) *err_ = why;
    }
    return false;
  }
  bool check(const Reader& r, const char* what) {
    return r.ok() ? true : bad(std::string("onnx: ") + what + ": " + r.error());
  }
  bool value_info(std::string_view bytes, int depth, Scope* scope, Graph* g, bool input);
  bool node(std::string_view bytes, int depth, const Scope* scope, const std::string& gname,
            size_t index, RawNode* out);
  void classify(RawNode* rn, const Scope& scope);

  Graph* top_;
  std::string* err_;
  Status status_ = Status::kOk;
};

int64_t product(const std::vector<int64_t>& d, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) {
    if (d[i] <= 0 || p > (int64_t{1} << 50) / d[i]) return -1;  // unknown or absurd
    p *= d[i];
  }
  return p;
}

bool OnnxReader::value_info(std::string_view bytes, int depth, Scope* scope, Graph* g, bool input) {
  std::string name;
  std::vector<int64_t> dims;
  bool has_shape = false;
  int64_t elem = 0;
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.number == 1 && f.wire == proto::kLen) name.assign(f.bytes);
    if (f.number != 2 || f.wire != proto::kLen) continue;
    Reader type(f.bytes, depth + 1);  // TypeProto
    Field tf;
    while (type.next(&tf)) {
      if (tf.number != 1 || tf.wire != proto::kLen) continue;
      Reader tensor(tf.bytes, depth + 2);  // TypeProto.Tensor
      Field sf;
      while (tensor.next(&sf)) {
        if (sf.number == 1 && sf.wire == proto::kVarint) elem = static_cast<int64_t>(sf.varint);
        if (sf.number != 2 || sf.wire != proto::kLen) continue;
        has_shape = true;
        Reader shape(sf.bytes, depth + 3);  // TensorShapeProto
        Field df;
        while (shape.next(&df)) {
          if (df.number != 1 || df.wire != proto::kLen) continue;
          int64_t v = -1;  // a symbolic or missing dim is unknown
          Reader dim(df.bytes, depth + 4);
          Field vf;
          while (dim.next(&vf))
            if (vf.number == 1 && vf.wire == proto::kVarint) v = static_cast<int64_t>(vf.varint);
          if (!check(dim, "dimension")) return false;
          if (dims.size() >= 1024) return bad("onnx: a tensor of rank over 1024");
          dims.push_back(v < 0 ? -1 : v);
        }
        if (!check(shape, "shape")) return false;
      }
      if (!check(tensor, "tensor type")) return false;
    }
    if (!check(type, "type")) return false;
  }
  if (!check(r, "value info")) return false;
  if (name.empty()) return true;
  if (input) g->inputs.push_back(name);
  TensorInfo& t = g->tensors[name];
  if (t.constant) return true;  // an initializer listed as an input too: its dims win
  t.dtype = elem >= 0 && elem <= 16 ? static_cast<DType>(elem) : DType::kUnknown;
  if (has_shape) {
    t.dims = dims;
    t.rank = static_cast<int>(dims.size());
    scope->shapes[name] = std::move(dims);
  }
  return true;
}

bool OnnxReader::node(std::string_view bytes, int depth, const Scope* scope,
                      const std::string& gname, size_t index, RawNode* out) {
  Node& n = out->node;
  std::vector<std::pair<std::string, std::string_view>> bodies;  // (attr label, GraphProto)
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.wire != proto::kLen) continue;
    switch (f.number) {
      case 1:
        n.inputs.emplace_back(f.bytes);
        break;
      case 2:
        n.outputs.emplace_back(f.bytes);
        break;
      case 3:
        n.name.assign(f.bytes);
        break;
      case 4:
        n.op.assign(f.bytes);
        break;
      case 5: {
        std::vector<std::string_view> graphs;
        Attr at;
        const char* why = nullptr;
        if (!onnx_attr(f.bytes, depth + 1, &at, &graphs, &why))
          return bad(std::string("onnx: attribute: ") + (why ? why : "malformed"));
        const std::string aname = at.name;
        if (aname == "transA") out->trans_a = at.i;
        if (n.attrs.size() < 4096) n.attrs.push_back(std::move(at));
        for (size_t k = 0; k < graphs.size(); ++k)
          bodies.emplace_back(graphs.size() == 1 ? aname : aname + "[" + std::to_string(k) + "]",
                              graphs[k]);
        break;
      }
      default:
        break;
    }
  }
  if (!check(r, "node")) return false;
  // Bodies are parsed once the node's name is known (attributes may precede field 3).
  const std::string label = n.name.empty() ? n.op + "#" + std::to_string(index) : n.name;
  for (auto& [aname, body] : bodies) {
    Graph sub;
    sub.format = Format::kOnnx;
    sub.path = top_->path;
    std::unordered_set<std::string> free_names;
    if (!graph(body, depth + 2, scope, gname + "/" + label + "/" + aname, &sub, &free_names))
      return false;
    out->implicit.insert(out->implicit.end(), free_names.begin(), free_names.end());
    top_->subgraphs.push_back(std::move(sub));
  }
  return true;
}

void OnnxReader::classify(RawNode* rn, const Scope& scope) {
  Node& n = rn->node;
  const HeavyOp* h = heavy_op_find(Framework::kOnnx, n.op);
  if (!h) return;
  if (h->rule == HeavyRule::kConstOperand0) {
    if (n.inputs.empty() || !scope.is_const(n.inputs[0])) return;
  }
  n.heavy = true;
  // FLOPs where the file's shapes allow: one multiply-add (2 FLOPs) per output element per
  // reduction element.
  auto shape_of = [&](size_t i) -> const std::vector<int64_t>* {
    return i < n.inputs.size() ? scope.shape(n.inputs[i]) : nullptr;
  };
  const std::vector<int64_t>* out = n.outputs.empty() ? nullptr : scope.shape(n.outputs[0]);
  const std::string& op = n.op;
  int64_t a = -1, b = -1;
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const auto* w = shape_of(op == "QLinearConv" ? 3 : 1);
    if (out && w && w->size() >= 2) a = product(*out, 0), b = product(*w, 1);
  } else if (op == "ConvTranspose") {
    const auto* x = shape_of(0);
    const auto* w = shape_of(1);
    if (x && w && w->size() >= 2) a = product(*x, 0), b = product(*w, 1);
  } else if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul" || op == "Gemm") {
    const auto* x = shape_of(0);
    if (out && x && !x->empty()) {
      a = product(*out, 0);
      b = (op == "Gemm" && rn->trans_a) ? (*x)[0] : x->back();
    }
  } else if (h->rule == HeavyRule::kConstOperand0 && out) {
    // An embedding lookup does no arithmetic: its cost is the elements it copies.
    a = product(*out, 0);
    b = 1;
  }
  if (a > 0 && b > 0) n.flops = (op.rfind("Gather", 0) == 0 ? 1.0 : 2.0) * double(a) * double(b);
}

bool OnnxReader::graph(std::string_view bytes, int depth, const Scope* parent,
                       const std::string& name, Graph* g,
                       std::unordered_set<std::string>* free_names) {
  Scope scope;
  scope.parent = parent;
  std::unordered_set<std::string> defined;  // initializers and graph inputs
  std::vector<std::string_view> node_bytes;
  g->name = name;
  Reader r(bytes, depth);
  Field f;
  while (r.next(&f)) {
    if (f.wire != proto::kLen) continue;
    if (f.number == 1) {
      node_bytes.push_back(f.bytes);
    } else if (f.number == 2 && name.empty()) {
      g->name.assign(f.bytes);
    } else if (f.number == 5 || f.number == 15) {
      std::string_view t = f.bytes;
      if (f.number == 15) {  // SparseTensorProto: the name is on its values tensor
        Reader sp(f.bytes, depth + 1);
        Field sf;
        t = {};
        while (sp.next(&sf))
          if (sf.number == 1 && sf.wire == proto::kLen) t = sf.bytes;
        if (!check(sp, "sparse initializer")) return false;
      }
      std::string tname;
      TensorInfo info;
      const char* why = nullptr;
      if (!onnx_tensor(t, depth + 2, &tname, &info, &why))
        return bad(std::string("onnx: tensor: ") + (why ? why : "malformed"));
      scope.consts.insert(tname);
      defined.insert(tname);
      scope.shapes[tname] = info.dims;
      g->tensors[tname] = std::move(info);
    } else if (f.number == 11 || f.number == 12 || f.number == 13) {
      if (!value_info(f.bytes, depth + 1, &scope, g, f.number == 11)) return false;
      if (f.number == 12) {
        Reader vi(f.bytes, depth + 1);
        Field vf;
        while (vi.next(&vf))
          if (vf.number == 1 && vf.wire == proto::kLen) g->outputs.emplace_back(vf.bytes);
      }
      if (f.number == 11) {  // graph inputs are defined names
        Reader vi(f.bytes, depth + 1);
        Field vf;
        while (vi.next(&vf))
          if (vf.number == 1 && vf.wire == proto::kLen) defined.emplace(vf.bytes);
      }
    }
  }
  if (!check(r, "graph")) return false;
  // Initializers listed among the inputs (old exporters) are weights, not inputs.
  {
    std::vector<std::string> real;
    for (std::string& in : g->inputs)
      if (!scope.consts.count(in)) real.push_back(std::move(in));
    g->inputs = std::move(real);
  }
  if (node_bytes.size() > kMaxNodes) return bad("onnx: too many nodes", Status::kTooLarge);

  std::vector<RawNode> raw(node_bytes.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (!node(node_bytes[i], depth + 1, &scope, name.empty() ? g->name : name, i, &raw[i]))
      return false;
    if (raw[i].node.op == "Constant")
      for (const std::string& o : raw[i].node.outputs) scope.consts.insert(o);
  }
  std::unordered_map<std::string, uint32_t> producer;
  producer.reserve(raw.size() * 2);
  for (size_t i = 0; i < raw.size(); ++i)
    for (const std::string& o : raw[i].node.outputs)
      if (!o.empty()) producer.emplace(o, static_cast<uint32_t>(i));

  std::unordered_map<std::string, int> out_index;
  for (size_t i = 0; i < raw.size(); ++i)
    for (size_t k = 0; k < raw[i].node.outputs.size(); ++k)
      if (!raw[i].node.outputs[k].empty())
        out_index.emplace(raw[i].node.outputs[k], static_cast<int>(k));
  auto link = [&](const std::string& in, Node* n, bool first, Node::Source* src) {
    if (in.empty()) return;  // an omitted optional input
    auto it = producer.find(in);
    if (it != producer.end()) {
      n->preds.push_back(it->second);
      if (first) n->operand0 = it->second;
      if (src) {  // a data input (not a name read by a subgraph)
        src->node = it->second;
        src->output = out_index[in];
      }
    } else if (!defined.count(in) && free_names) {
      free_names->insert(in);  // read from an enclosing graph
    }
  };
  g->nodes.reserve(raw.size());
  for (RawNode& rn : raw) {
    rn.node.sources.assign(rn.node.inputs.size(), Node::Source{});
    for (size_t k = 0; k < rn.node.inputs.size(); ++k)
      link(rn.node.inputs[k], &rn.node, k == 0, &rn.node.sources[k]);
    for (const std::string& in : rn.implicit) link(in, &rn.node, false, nullptr);
    classify(&rn, scope);
    if (!rn.node.outputs.empty())
      if (const auto* s = scope.shape(rn.node.outputs[0])) rn.node.shape = *s;
    g->nodes.push_back(std::move(rn.node));
  }
  return true;
}

}  // namespace

Status onnx_read(std::string_view bytes, Graph* out, std::string* err) {
  std::string_view graph_bytes;
  bool found = false;
  Reader r(bytes, 0);
  Field f;
  while (r.next(&f)) {
    // ModelProto: ir_version 1 is a varint; graph 7 is a message. Other wire types on those
    // numbers mean these bytes are not an ONNX model.
    if (f.number == 7) {
      if (f.wire != proto::kLen)
        return fail(err, Status::kBadFormat, "onnx: graph field has wrong wire type");
      graph_bytes = f.bytes;
      found = true;
    } else if (f.number == 1 && f.wire != proto::kVarint) {
      return fail(err, Status::kBadFormat, "onnx: ir_version field has wrong wire type");
    }
  }
  if (!r.ok()) return fail(err, Status::kBadFormat, std::string("onnx: model: ") + r.error());
  if (!found) return fail(err, Status::kBadFormat, "onnx: no graph in the model");
  Graph g;
  g.format = Format::kOnnx;
  g.path = out->path;
  OnnxReader reader(&g, err);
  if (!reader.graph(graph_bytes, 1, nullptr, "", &g, nullptr)) return reader.status();
  if (g.nodes.empty()) return fail(err, Status::kBadFormat, "onnx: the graph has no nodes");
  *out = std::move(g);
  return Status::kOk;
}

}  // namespace pw::graph
