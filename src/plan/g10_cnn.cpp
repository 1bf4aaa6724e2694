// G10's CNN workloads: a PyTorch module print, turned into a layer graph
// (the block types G10 knows: ResNet's BasicBlock/Bottleneck, Inception's
// A-E, SENet's SENetUnit; any other container is a chain), then into the
// kernels of one training iteration with their tensors.
//
// Written from G10's description and its frontend's observable behaviour:
// the same layers, kernels and tensor sizes (its kernel-time files index
// kernels by position, so the order matters), including its simplifications
// (a ResNet block's ReLU before the residual add, the SE scale reading only
// the gate, pooling before an Inception pool branch as a 3x3 max pool).
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>

#include "core/error.h"
#include "plan/g10_reader.h"

namespace memlake::plan {
namespace {

[[noreturn]] void fail_at(const std::string& file, int line, const std::string& what) {
  std::string m;
  appendf(m, "%s:%d: %s", file.c_str(), line, what.c_str());
  throw_error(Errc::invalid_argument, m);
}

// ---- the module print ------------------------------------------------------

struct Node {
  std::string name;  // "(conv1)" without parentheses; "" for the model
  std::string type;  // Conv2d, Sequential, Bottleneck, ...
  std::string args;  // leaf only: the text inside the parentheses
  int line = 0;
  std::vector<std::unique_ptr<Node>> children;
  bool leaf() const { return children.empty() && !container; }
  bool container = false;
};

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::unique_ptr<Node> parse_module_print(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw_error(Errc::invalid_argument, "cannot open network file " + file);
  std::vector<Node*> stack;
  std::unique_ptr<Node> root;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string s = trim(raw);
    if (s.empty()) continue;
    if (s == ")") {
      if (stack.empty()) fail_at(file, line, "unbalanced ')'");
      stack.pop_back();
      continue;
    }
    auto node = std::make_unique<Node>();
    node->line = line;
    std::string rest = s;
    if (s[0] == '(') {
      std::size_t close = s.find("): ");
      if (close == std::string::npos) fail_at(file, line, "expected '(name): Type(...)', got '" + s + "'");
      node->name = s.substr(1, close - 1);
      rest = s.substr(close + 3);
    } else if (root) {
      fail_at(file, line, "expected '(name): Type(...)' or ')', got '" + s + "'");
    }
    std::size_t paren = rest.find('(');
    if (paren == std::string::npos || paren == 0) fail_at(file, line, "expected 'Type(', got '" + rest + "'");
    node->type = rest.substr(0, paren);
    for (char c : node->type)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        fail_at(file, line, "bad module type '" + node->type + "'");
    std::string inside = rest.substr(paren + 1);
    Node* raw_node = node.get();
    if (inside.empty()) {
      node->container = true;
    } else {
      if (inside.back() != ')') fail_at(file, line, "missing ')' at the end of '" + rest + "'");
      node->args = inside.substr(0, inside.size() - 1);
    }
    if (!root) {
      if (!node->container) fail_at(file, line, "the model must be a container 'Name('");
      root = std::move(node);
    } else {
      if (stack.empty()) fail_at(file, line, "text after the model's closing ')'");
      stack.back()->children.push_back(std::move(node));
    }
    if (raw_node->container) stack.push_back(raw_node);
  }
  if (!root) fail_at(file, line, "empty network file");
  if (!stack.empty()) fail_at(file, line, "unterminated '" + stack.back()->type + "(' opened at line " +
                                              std::to_string(stack.back()->line));
  return root;
}

// Arguments "64, 128, kernel_size=(3, 3), stride=(1, 1), bias=False":
// positional integers and key=value (a value may be a tuple).
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> kw;
};

Args split_args(const Node& n, const std::string& file) {
  Args a;
  std::string cur;
  int depth = 0;
  auto flush = [&] {
    std::string t = trim(cur);
    cur.clear();
    if (t.empty()) return;
    std::size_t eq = t.find('=');
    if (eq == std::string::npos) a.positional.push_back(t);
    else a.kw[trim(t.substr(0, eq))] = trim(t.substr(eq + 1));
  };
  for (char c : n.args) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth < 0) fail_at(file, n.line, "unbalanced ')' in arguments");
    if (c == ',' && depth == 0) flush();
    else cur += c;
  }
  if (depth != 0) fail_at(file, n.line, "unbalanced '(' in arguments");
  flush();
  return a;
}

long to_int(const std::string& s, const Node& n, const std::string& file, const char* what) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) fail_at(file, n.line, std::string("bad ") + what + " '" + s + "'");
  return v;
}

// "(3, 1)" -> {3, 1}; "3" -> {3, 3}.
std::pair<long, long> pair_of(const std::string& s, const Node& n, const std::string& file, const char* what) {
  std::string t = trim(s);
  if (!t.empty() && t.front() == '(') {
    if (t.back() != ')') fail_at(file, n.line, std::string("bad ") + what + " '" + s + "'");
    std::string in = t.substr(1, t.size() - 2);
    std::size_t c = in.find(',');
    if (c == std::string::npos) fail_at(file, n.line, std::string("bad ") + what + " '" + s + "'");
    return {to_int(trim(in.substr(0, c)), n, file, what), to_int(trim(in.substr(c + 1)), n, file, what)};
  }
  long v = to_int(t, n, file, what);
  return {v, v};
}

bool to_bool(const std::string& s, const Node& n, const std::string& file, const char* what) {
  if (s == "True") return true;
  if (s == "False") return false;
  fail_at(file, n.line, std::string("bad ") + what + " '" + s + "' (True or False)");
}

// ---- the layer graph ------------------------------------------------------

enum class Op { Conv, ReLU, MaxPool, AvgPool, Dropout, Linear, BatchNorm, Add, Concat, Scale };

struct Layer {
  Op op = Op::ReLU;
  int line = 0;
  // Conv: in, out, r, s, stride, pad; MaxPool: k, stride, pad; AvgPool: oh, ow;
  // Linear: in, out; BatchNorm: features.
  long p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  bool flag = false;      // Conv/Linear: bias; ReLU/Dropout: inplace; BN: track_running_stats
  int scale_ref = -1;     // Scale: the layer whose output shape it takes
  std::vector<int> prev, next;
  long N = 0, C = 0, H = 0, W = 0;  // input shape
  // tensors
  TensorId in = -1, out = -1, d_in = -1, d_out = -1, weight = -1, d_weight = -1, bias = -1, d_bias = -1;
  TensorId ab = -1, d_ab = -1, mu = -1, var = -1, v1 = -1, v2 = -1, d_mu = -1, d_var = -1, d_v1 = -1, d_v2 = -1;
  TensorId run_m = -1, run_v = -1, mask = -1;
  std::vector<TensorId> other_in, other_d_in, other_d_out;
};

struct Graph {
  std::string file;
  std::vector<Layer> layers;
  enum class Family { Plain, ResNet, Inception, SENet } family = Family::Plain;

  int add(Layer l, int input) {
    layers.push_back(std::move(l));
    int id = static_cast<int>(layers.size() - 1);
    if (input >= 0) link(input, id);
    return id;
  }
  void link(int from, int to) {
    layers[from].next.push_back(to);
    layers[to].prev.push_back(from);
  }
  int leaf(const Node& n, int input);
  int node(const Node& n, int input);
  int chain(const Node& n, int input) {
    for (const auto& c : n.children) input = node(*c, input);
    return input;
  }
  int pool(long k, long stride, long pad, int input, int line) {
    Layer l;
    l.op = Op::MaxPool;
    l.line = line;
    l.p[0] = k, l.p[1] = stride, l.p[2] = pad;
    return add(l, input);
  }
  int combine(Op op, const std::vector<int>& inputs, int line) {
    Layer l;
    l.op = op;
    l.line = line;
    int id = add(l, -1);
    for (int i : inputs) link(i, id);
    return id;
  }
  int resnet_block(const Node& n, int x, std::size_t body_len);
  int inception_block(const Node& n, int x);
  int senet_unit(const Node& n, int x);
  void out_shape(int i, long& N, long& C, long& H, long& W) const;
};

int Graph::leaf(const Node& n, int input) {
  Args a = split_args(n, file);
  Layer l;
  l.op = Op::ReLU;
  l.line = n.line;
  auto kw = [&](const char* key) -> const std::string* {
    auto it = a.kw.find(key);
    return it == a.kw.end() ? nullptr : &it->second;
  };
  if (n.type == "Conv2d") {
    if (a.positional.size() != 2 || !kw("kernel_size"))
      fail_at(file, n.line, "Conv2d needs in and out channels and kernel_size");
    l.op = Op::Conv;
    l.p[0] = to_int(a.positional[0], n, file, "in_channels");
    l.p[1] = to_int(a.positional[1], n, file, "out_channels");
    auto k = pair_of(*kw("kernel_size"), n, file, "kernel_size");
    auto s = kw("stride") ? pair_of(*kw("stride"), n, file, "stride") : std::pair<long, long>{1, 1};
    auto p = kw("padding") ? pair_of(*kw("padding"), n, file, "padding") : std::pair<long, long>{0, 0};
    l.p[2] = k.first, l.p[3] = k.second, l.p[4] = s.first, l.p[5] = s.second, l.p[6] = p.first, l.p[7] = p.second;
    if (kw("groups") && *kw("groups") != "1") fail_at(file, n.line, "grouped convolutions are not supported");
    l.flag = kw("bias") ? to_bool(*kw("bias"), n, file, "bias") : true;
    if (l.p[4] == 0 || l.p[5] == 0) fail_at(file, n.line, "stride 0");
  } else if (n.type == "ReLU") {
    l.op = Op::ReLU;
    l.flag = kw("inplace") ? to_bool(*kw("inplace"), n, file, "inplace") : false;
  } else if (n.type == "MaxPool2d") {
    if (!kw("kernel_size")) fail_at(file, n.line, "MaxPool2d needs kernel_size");
    l.op = Op::MaxPool;
    l.p[0] = pair_of(*kw("kernel_size"), n, file, "kernel_size").first;
    l.p[1] = kw("stride") ? pair_of(*kw("stride"), n, file, "stride").first : l.p[0];
    l.p[2] = kw("padding") ? pair_of(*kw("padding"), n, file, "padding").first : 0;
    if (l.p[1] == 0) fail_at(file, n.line, "stride 0");
  } else if (n.type == "AdaptiveAvgPool2d") {
    if (!kw("output_size")) fail_at(file, n.line, "AdaptiveAvgPool2d needs output_size");
    l.op = Op::AvgPool;
    auto o = pair_of(*kw("output_size"), n, file, "output_size");
    l.p[0] = o.first, l.p[1] = o.second;
  } else if (n.type == "Dropout") {
    l.op = Op::Dropout;
    l.flag = kw("inplace") ? to_bool(*kw("inplace"), n, file, "inplace") : false;
  } else if (n.type == "Linear") {
    if (!kw("in_features") || !kw("out_features")) fail_at(file, n.line, "Linear needs in_features and out_features");
    l.op = Op::Linear;
    l.p[0] = to_int(*kw("in_features"), n, file, "in_features");
    l.p[1] = to_int(*kw("out_features"), n, file, "out_features");
    if (l.p[0] == 0) fail_at(file, n.line, "in_features 0");
    l.flag = kw("bias") ? to_bool(*kw("bias"), n, file, "bias") : true;
  } else if (n.type == "BatchNorm2d") {
    if (a.positional.size() != 1) fail_at(file, n.line, "BatchNorm2d needs num_features");
    l.op = Op::BatchNorm;
    l.p[0] = to_int(a.positional[0], n, file, "num_features");
    l.flag = kw("track_running_stats") ? to_bool(*kw("track_running_stats"), n, file, "track_running_stats") : true;
  } else {
    fail_at(file, n.line, "unsupported layer type '" + n.type + "'");
  }
  return add(l, input);
}

int Graph::node(const Node& n, int input) {
  if (!n.container) return leaf(n, input);
  if (family == Family::ResNet && n.type == "Bottleneck") return resnet_block(n, input, 7);
  if (family == Family::ResNet && n.type == "BasicBlock") return resnet_block(n, input, 5);
  if (family == Family::Inception && n.type.rfind("Inception", 0) == 0) return inception_block(n, input);
  if (family == Family::SENet && n.type == "SENetUnit") return senet_unit(n, input);
  return chain(n, input);
}

// ResNet: the body's layers in print order (its single ReLU included), the
// optional downsample from the block's input, then the residual add.
int Graph::resnet_block(const Node& n, int x, std::size_t body_len) {
  const std::size_t nc = n.children.size();
  if (nc != body_len && nc != body_len + 1)
    fail_at(file, n.line, n.type + " with " + std::to_string(nc) + " children (expected " + std::to_string(body_len) +
                              " or " + std::to_string(body_len + 1) + ")");
  int body = x;
  for (std::size_t i = 0; i < body_len; ++i) body = node(*n.children[i], body);
  if (x < 0) fail_at(file, n.line, n.type + " cannot be the first layer");
  if (nc == body_len + 1) {
    int ds = node(*n.children[body_len], x);
    return combine(Op::Add, {body, ds}, n.line);
  }
  // Without downsample the input comes first (its gradient order matters).
  int add = combine(Op::Add, {}, n.line);
  link(x, add);
  link(body, add);
  return add;
}

// "branch3x3dbl_3a" -> stem "branch3x3dbl", fork letter 'a'.
void branch_name(const std::string& name, std::string& stem, char& fork) {
  stem = name;
  fork = 0;
  std::size_t u = name.rfind('_');
  if (u == std::string::npos || u + 1 >= name.size() || !std::isdigit(static_cast<unsigned char>(name[u + 1]))) return;
  std::size_t i = u + 1;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i + 1 == name.size() && std::isalpha(static_cast<unsigned char>(name[i]))) fork = name[i];
  else if (i != name.size()) return;
  stem = name.substr(0, u);
}

// Inception: branches (children grouped by name stem) from the block's input,
// concatenated. A pool branch gets a stride-1 3x3 pool before it; a block
// without one gets a stride-2 3x3 pool as its last branch. Members with a
// letter suffix (_2a, _2b) fork from the previous member and are concatenated.
int Graph::inception_block(const Node& n, int x) {
  if (x < 0) fail_at(file, n.line, n.type + " cannot be the first layer");
  std::vector<int> ends;
  bool has_pool_branch = false;
  std::size_t i = 0;
  const auto& ch = n.children;
  while (i < ch.size()) {
    std::string stem;
    char fork;
    branch_name(ch[i]->name, stem, fork);
    int cur = x;
    if (stem == "branch_pool") {
      has_pool_branch = true;
      cur = pool(3, 1, 1, x, ch[i]->line);
    }
    std::size_t j = i;
    while (j < ch.size()) {
      std::string s2;
      char f2;
      branch_name(ch[j]->name, s2, f2);
      if (s2 != stem) break;
      if (f2 != 0) {
        std::vector<int> forks;
        int base = cur;
        while (j < ch.size()) {
          branch_name(ch[j]->name, s2, f2);
          if (s2 != stem || f2 == 0) break;
          forks.push_back(node(*ch[j], base));
          ++j;
        }
        cur = combine(Op::Concat, forks, ch[j - 1]->line);
        continue;
      }
      cur = node(*ch[j], cur);
      ++j;
    }
    ends.push_back(cur);
    i = j;
  }
  if (!has_pool_branch) ends.push_back(pool(3, 2, 0, x, n.line));
  return combine(Op::Concat, ends, n.line);
}

// SENet unit: body, squeeze-excitation gate from the body's output, the gate
// scaled to the residual's shape, the residual (input or identity_conv),
// their sum, then the unit's activation.
int Graph::senet_unit(const Node& n, int x) {
  const auto& ch = n.children;
  if (ch.size() != 3 && ch.size() != 4)
    fail_at(file, n.line, "SENetUnit with " + std::to_string(ch.size()) + " children (expected 3 or 4)");
  if (x < 0) fail_at(file, n.line, "SENetUnit cannot be the first layer");
  int body = node(*ch[0], x);
  int se = node(*ch[1], body);
  Layer sl;
  sl.op = Op::Scale;
  sl.line = n.line;
  int scale = add(sl, se);
  int residual = x;
  if (ch.size() == 4) residual = node(*ch[2], x);
  layers[scale].scale_ref = residual;
  int sum = combine(Op::Add, {scale, residual}, n.line);
  return node(*ch.back(), sum);
}

void Graph::out_shape(int i, long& N, long& C, long& H, long& W) const {
  const Layer& l = layers[i];
  N = l.N, C = l.C, H = l.H, W = l.W;
  switch (l.op) {
    case Op::Conv:
      C = l.p[1];
      H = (l.H - l.p[2] + 2 * l.p[6]) / l.p[4] + 1;
      W = (l.W - l.p[3] + 2 * l.p[7]) / l.p[5] + 1;
      break;
    case Op::MaxPool:
      H = (l.H - l.p[0] + 2 * l.p[2]) / l.p[1] + 1;
      W = (l.W - l.p[0] + 2 * l.p[2]) / l.p[1] + 1;
      break;
    case Op::AvgPool: H = l.p[0], W = l.p[1]; break;
    case Op::Linear:
      C = (l.C * l.H * l.W / l.p[0]) * l.p[1];
      H = W = 1;
      break;
    case Op::Scale: {
      long n2, c2, h2, w2;
      out_shape(l.scale_ref, n2, c2, h2, w2);
      H = h2, W = w2;
      break;
    }
    default: break;
  }
}

// ---- tensors and kernels ---------------------------------------------------

struct Emit {
  Profile& p;
  TensorId t(const char* what, int layer, long long elems, bool persistent = false) {
    if (elems <= 0) {
      std::string m;
      appendf(m, "layer %d: %s has a non-positive size (%lld elements): the network's shapes do not fit its input",
              layer, what, elems);
      throw_error(Errc::invalid_argument, m);
    }
    std::string nm;
    appendf(nm, "L%d.%s", layer, what);
    return p.add_tensor(nm, g10_page_round(static_cast<std::uint64_t>(elems) * 4), persistent);
  }
  void k(std::string name, std::vector<TensorId> in, std::vector<TensorId> out) {
    Kernel kr;
    kr.name = std::move(name);
    for (TensorId x : in)
      if (x >= 0) kr.reads.push_back(x);
    for (TensorId x : out)
      if (x >= 0) kr.writes.push_back(x);
    p.kernels.push_back(std::move(kr));
  }
};

const char* op_name(Op op) {
  switch (op) {
    case Op::Conv: return "Conv2d";
    case Op::ReLU: return "ReLU";
    case Op::MaxPool: return "MaxPool2d";
    case Op::AvgPool: return "AdaptiveAvgPool2d";
    case Op::Dropout: return "Dropout";
    case Op::Linear: return "Linear";
    case Op::BatchNorm: return "BatchNorm2d";
    case Op::Add: return "Add";
    case Op::Concat: return "Concat";
    case Op::Scale: return "Scale";
  }
  return "?";
}

void build(Graph& g, int batch, int hw, Profile& p) {
  auto& L = g.layers;
  if (L.empty() || L[0].op != Op::Conv) throw_error(Errc::invalid_argument, g.file + ": the first layer must be a Conv2d");
  L[0].N = batch, L[0].C = L[0].p[0], L[0].H = L[0].W = hw;
  for (std::size_t i = 1; i < L.size(); ++i) {
    Layer& l = L[i];
    if (l.prev.empty()) fail_at(g.file, l.line, std::string(op_name(l.op)) + " layer without an input");
    long n, c, h, w;
    g.out_shape(l.prev[0], n, c, h, w);
    l.N = n, l.C = c, l.H = h, l.W = w;
    if (l.op == Op::Concat) {
      l.C = 0;
      for (int q : l.prev) {
        long n2, c2, h2, w2;
        g.out_shape(q, n2, c2, h2, w2);
        if (h2 != h || w2 != w) fail_at(g.file, l.line, "concatenated branches differ in height or width");
        l.C += c2;
      }
    } else if (l.op == Op::Add) {
      for (int q : l.prev) {
        long n2, c2, h2, w2;
        g.out_shape(q, n2, c2, h2, w2);
        if (c2 != c || h2 != h || w2 != w) fail_at(g.file, l.line, "added tensors differ in shape");
      }
    } else if (l.op == Op::Conv && l.C != l.p[0]) {
      fail_at(g.file, l.line, "Conv2d expects " + std::to_string(l.p[0]) + " input channels, gets " + std::to_string(l.C));
    }
  }
  Emit e{p};
  // Forward tensors.
  for (std::size_t ii = 0; ii < L.size(); ++ii) {
    const int i = static_cast<int>(ii);
    Layer& l = L[i];
    const long long nchw = static_cast<long long>(l.N) * l.C * l.H * l.W;
    long on, oc, oh, ow;
    g.out_shape(i, on, oc, oh, ow);
    const long long out_elems = static_cast<long long>(on) * oc * oh * ow;
    if (i > 0) l.in = L[l.prev[0]].out;
    switch (l.op) {
      case Op::Conv:
        if (i == 0) l.in = e.t("input", i, nchw);
        l.out = e.t("out", i, out_elems);
        l.weight = e.t("weight", i, static_cast<long long>(l.p[1]) * l.C * l.p[2] * l.p[3], true);
        l.d_weight = e.t("d_weight", i, static_cast<long long>(l.p[1]) * l.C * l.p[2] * l.p[3]);
        l.d_in = e.t("d_in", i, nchw);
        break;
      case Op::ReLU:
        l.out = l.flag ? l.in : e.t("out", i, nchw);
        l.d_in = e.t("d_in", i, nchw);
        break;
      case Op::MaxPool:
      case Op::AvgPool:
        l.out = e.t("out", i, out_elems);
        l.d_in = e.t("d_in", i, nchw);
        break;
      case Op::Dropout:
        l.mask = e.t("mask", i, nchw);
        l.out = l.flag ? l.in : e.t("out", i, nchw);
        l.d_in = e.t("d_in", i, nchw);
        break;
      case Op::Linear:
        l.weight = e.t("weight", i, static_cast<long long>(l.p[0]) * l.p[1], true);
        l.out = e.t("out", i, out_elems);
        l.d_in = e.t("d_in", i, nchw);
        l.d_weight = e.t("d_weight", i, static_cast<long long>(l.p[0]) * l.p[1]);
        if (l.flag) {
          l.bias = e.t("bias", i, l.p[1], true);
          l.d_bias = e.t("d_bias", i, l.p[1]);
        }
        break;
      case Op::BatchNorm:
        l.out = e.t("out", i, nchw);
        l.d_in = e.t("d_in", i, nchw);
        l.ab = e.t("alpha_beta", i, 2LL * l.C, true);
        l.d_ab = e.t("d_alpha_beta", i, 2LL * l.C);
        l.mu = e.t("mu", i, l.C);
        l.var = e.t("var", i, l.C);
        l.v1 = e.t("v1", i, nchw);
        l.v2 = e.t("v2", i, l.C);
        l.d_mu = e.t("d_mu", i, l.C);
        l.d_var = e.t("d_var", i, l.C);
        l.d_v1 = e.t("d_v1", i, nchw);
        l.d_v2 = e.t("d_v2", i, l.C);
        if (l.flag) {
          l.run_m = e.t("running_mean", i, l.C, true);
          l.run_v = e.t("running_var", i, l.C, true);
        }
        break;
      case Op::Add:
        for (std::size_t q = 1; q < l.prev.size(); ++q) l.other_in.push_back(L[l.prev[q]].out);
        l.out = e.t("out", i, nchw);
        break;
      case Op::Concat:
        l.d_in = e.t("d_in", i, static_cast<long long>(l.N) * l.H * l.W * L[l.prev[0]].C);
        for (std::size_t q = 1; q < l.prev.size(); ++q) {
          l.other_in.push_back(L[l.prev[q]].out);
          l.other_d_in.push_back(e.t("d_in", i, static_cast<long long>(l.N) * l.H * l.W * L[l.prev[q]].C));
        }
        l.out = e.t("out", i, nchw);
        break;
      case Op::Scale:
        l.out = e.t("out", i, out_elems);
        l.d_in = e.t("d_in", i, nchw);
        break;
    }
  }
  // Gradients flowing into each layer's output, last layer first.
  for (int i = static_cast<int>(L.size()) - 1; i >= 0; --i) {
    Layer& l = L[i];
    if (i == static_cast<int>(L.size()) - 1) {
      long on, oc, oh, ow;
      g.out_shape(i, on, oc, oh, ow);
      l.d_out = e.t("d_out", i, static_cast<long long>(on) * oc * oh * ow);
      continue;
    }
    for (std::size_t q = 0; q < l.next.size(); ++q) {
      const Layer& nx = L[l.next[q]];
      TensorId grad;
      if (nx.op == Op::Add) {
        grad = nx.d_out;
      } else if (nx.op == Op::Concat) {
        std::size_t idx = 0;
        while (idx < nx.prev.size() && nx.prev[idx] != i) ++idx;
        grad = idx == 0 ? nx.d_in : nx.other_d_in[idx - 1];
      } else {
        grad = nx.d_in;
      }
      if (q == 0) l.d_out = grad;
      else l.other_d_out.push_back(grad);
    }
  }
  // Kernels: forward, loss, backward with the weight updates.
  for (std::size_t ii = 0; ii < L.size(); ++ii) {
    const Layer& l = L[ii];
    std::string nm = std::string(op_name(l.op)) + "_Forward#" + std::to_string(ii);
    switch (l.op) {
      case Op::Conv:
        if (ii == 0) e.k("LoadData_A0", {}, {l.in});
        e.k(nm, {l.in, l.weight}, {l.out});
        break;
      case Op::Dropout: e.k(nm, {l.in, l.mask}, {l.out}); break;
      case Op::Linear: e.k(nm, {l.in, l.weight, l.bias}, {l.out}); break;
      case Op::BatchNorm:
        e.k(nm, {l.in, l.ab, l.run_m, l.run_v}, {l.run_m, l.run_v, l.out, l.mu, l.var, l.v1, l.v2});
        break;
      case Op::Add:
      case Op::Concat: {
        std::vector<TensorId> in{l.in};
        in.insert(in.end(), l.other_in.begin(), l.other_in.end());
        e.k(nm, in, {l.out});
        break;
      }
      default: e.k(nm, {l.in}, {l.out}); break;
    }
  }
  e.k("makeLoss", {L.back().out}, {L.back().d_out});
  for (int i = static_cast<int>(L.size()) - 1; i >= 0; --i) {
    const Layer& l = L[i];
    std::string sfx;
    appendf(sfx, "#%d", i);  // (not "#" + std::to_string(i): GCC 12 warns falsely on that)
    if (!l.other_d_out.empty()) {
      std::vector<TensorId> in{l.d_out};
      in.insert(in.end(), l.other_d_out.begin(), l.other_d_out.end());
      e.k("Add_MultiGradient" + sfx, in, {l.d_out});
    }
    switch (l.op) {
      case Op::Conv:
        e.k("Conv2d_Backward_Weight" + sfx, {l.d_out, l.in}, {l.d_weight});
        e.k("Conv2d_Backward_Input" + sfx, {l.d_out, l.weight}, {l.d_in});
        e.k("Conv2d_Apply_Grad" + sfx, {l.d_weight, l.weight}, {l.weight});
        break;
      case Op::ReLU:
      case Op::MaxPool:
      case Op::AvgPool:
        e.k(std::string(op_name(l.op)) + "_Backward" + sfx, {l.in, l.d_out}, {l.d_in});
        break;
      case Op::Dropout: e.k("Dropout_Backward" + sfx, {l.mask, l.d_out}, {l.d_in}); break;
      case Op::Linear:
        if (l.flag) {
          e.k("Linear_Backward_Bias" + sfx, {l.d_out}, {l.d_bias});
          e.k("Linear_Apply_Grad_Bias" + sfx, {l.d_bias, l.bias}, {l.bias});
        }
        e.k("Linear_Backward_Weight" + sfx, {l.d_out, l.in}, {l.d_weight});
        e.k("Linear_Backward_Input" + sfx, {l.weight, l.d_out}, {l.d_in});
        e.k("Linear_Apply_Grad_Weight" + sfx, {l.d_weight, l.weight}, {l.weight});
        break;
      case Op::BatchNorm:
        e.k("BatchNorm2d_Backward" + sfx, {l.d_out, l.v1, l.v2, l.ab}, {l.d_in, l.d_ab, l.d_mu, l.d_var, l.d_v1, l.d_v2});
        e.k("BatchNorm2d_Apply_Grad" + sfx, {l.d_ab, l.ab}, {l.ab});
        break;
      case Op::Concat: {
        std::vector<TensorId> out{l.d_in};
        out.insert(out.end(), l.other_d_in.begin(), l.other_d_in.end());
        e.k("Concat_Backward" + sfx, {l.d_out}, out);
        break;
      }
      case Op::Scale: e.k("Scale_Backward" + sfx, {l.d_out}, {l.d_in}); break;
      case Op::Add: break;  // the gradient passes through
    }
  }
}

}  // namespace

void read_g10_cnn(const std::string& net_file, int batch, int input_hw, Profile& out) {
  if (batch <= 0) throw_error(Errc::invalid_argument, "batch size must be positive");
  auto root = parse_module_print(net_file);
  Graph g;
  g.file = net_file;
  const std::string& t = root->type;
  if (t.find("ResNet") != std::string::npos || t.find("ResNeXt") != std::string::npos) g.family = Graph::Family::ResNet;
  else if (t.find("Inception") != std::string::npos) g.family = Graph::Family::Inception;
  else if (t.find("SENet") != std::string::npos) g.family = Graph::Family::SENet;
  g.chain(*root, -1);
  build(g, batch, input_hw, out);
}

}  // namespace memlake::plan
