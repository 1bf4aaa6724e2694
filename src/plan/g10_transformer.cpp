// G10's transformer workloads (BERT_Base, VIT, NeRF): a list of operators,
//   <op id>  <type>  <number of inputs n>  <n input tensor ids>
//   then for each input: <rank> <rank dimensions>   (99 = the batch size)
//   -------------------
// An operator's output is the tensor whose id is the operator's id. Tensor
// ids below a model-specific border are weights. A SoftmaxBasic is followed
// by the three operators it was lowered to; they stand for one kernel whose
// output takes the last one's id. Gradients: every input produced by an
// operator (or a weight) gets one; an operator whose output feeds several
// consumers first sums their gradients.
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "plan/g10_reader.h"

namespace memlake::plan {
namespace {

struct OpIn {
  int id = 0;
  std::vector<long long> dims;
  TensorId t = -1, d = -1;
};

struct Op {
  int id = 0;
  int line = 0;
  std::string type;
  std::vector<OpIn> in;
  TensorId out = -1;
  std::vector<TensorId> d_out;  // gradients of the output, one per consumer
};

class Tokens {
 public:
  Tokens(const std::string& file) : file_(file), in_(file) {
    if (!in_) throw_error(Errc::invalid_argument, "cannot open network file " + file);
  }
  bool next(std::string& tok) {
    while (pos_ >= words_.size()) {
      std::string raw;
      if (!std::getline(in_, raw)) return false;
      ++line_;
      words_.clear();
      pos_ = 0;
      std::istringstream ss(raw);
      std::string w;
      while (ss >> w) words_.push_back(w);
    }
    tok = words_[pos_++];
    return true;
  }
  long long number(const char* what) {
    std::string t;
    if (!next(t)) fail(std::string("unexpected end of file, expected ") + what);
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    if (*end != '\0' || t.empty()) fail(std::string("expected ") + what + ", got '" + t + "'");
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    std::string m;
    appendf(m, "%s:%d: %s", file_.c_str(), line_, what.c_str());
    throw_error(Errc::invalid_argument, m);
  }
  int line() const { return line_; }

 private:
  std::string file_;
  std::ifstream in_;
  std::vector<std::string> words_;
  std::size_t pos_ = 0;
  int line_ = 0;
};

Op read_op(Tokens& tk, int first_id, int batch, std::map<int, std::vector<long long>>& shapes) {
  Op op;
  op.id = first_id;
  op.line = tk.line();
  if (!tk.next(op.type)) tk.fail("unexpected end of file, expected an operator type");
  for (char c : op.type)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') tk.fail("bad operator type '" + op.type + "'");
  long long n = tk.number("the number of inputs");
  if (n < 0 || n > 64) tk.fail("bad number of inputs " + std::to_string(n));
  op.in.resize(static_cast<std::size_t>(n));
  for (auto& i : op.in) i.id = static_cast<int>(tk.number("an input tensor id"));
  for (auto& i : op.in) {
    long long rank = tk.number("a tensor rank");
    if (rank < 0 || rank > 8) tk.fail("bad tensor rank " + std::to_string(rank));
    for (long long r = 0; r < rank; ++r) {
      long long d = tk.number("a dimension");
      if (d <= 0) tk.fail("bad dimension " + std::to_string(d));
      i.dims.push_back(d == 99 ? batch : d);
    }
    shapes[i.id] = i.dims;
  }
  std::string sep;
  if (!tk.next(sep) || sep != "-------------------") tk.fail("expected the separator '-------------------'");
  return op;
}

// (a helper rather than "t" + std::to_string(): GCC 12 warns falsely on that)
std::string tensor_name(const char* prefix, int id) {
  std::string s;
  appendf(s, "%s%d", prefix, id);
  return s;
}

std::uint64_t elems(const std::vector<long long>& d) {
  std::uint64_t e = 1;
  for (long long x : d) e *= static_cast<std::uint64_t>(x);
  return e;
}

}  // namespace

void read_g10_transformer(const std::string& net_file, int batch, int border, Profile& p) {
  if (batch <= 0) throw_error(Errc::invalid_argument, "batch size must be positive");
  Tokens tk(net_file);
  std::map<int, std::vector<long long>> shapes;  // tensor id -> dims
  std::vector<Op> ops;
  std::string tok;
  while (tk.next(tok)) {
    char* end = nullptr;
    long id = std::strtol(tok.c_str(), &end, 10);
    if (*end != '\0' || tok.empty()) tk.fail("expected an operator id, got '" + tok + "'");
    Op op = read_op(tk, static_cast<int>(id), batch, shapes);
    if (op.type == "SoftmaxBasic") {
      int last = op.id;
      for (int j = 0; j < 3; ++j) {
        long long sub = tk.number("the id of a lowered softmax operator");
        read_op(tk, static_cast<int>(sub), batch, shapes);
        last = static_cast<int>(sub);
      }
      op.id = last;
    }
    ops.push_back(std::move(op));
  }
  if (ops.empty()) tk.fail("no operators");
  std::map<int, std::size_t> producer;
  for (std::size_t i = 0; i < ops.size(); ++i) producer[ops[i].id] = i;
  std::map<int, TensorId> tensor_of;
  auto tensor = [&](int id, const std::vector<long long>& dims) {
    auto it = tensor_of.find(id);
    if (it != tensor_of.end()) return it->second;
    TensorId t = p.add_tensor(tensor_name("t", id), g10_page_round(elems(dims) * 4), id < border);
    tensor_of[id] = t;
    return t;
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Op& op = ops[i];
    if (op.in.empty()) {
      std::string m;
      appendf(m, "%s:%d: operator %d (%s) has no inputs", net_file.c_str(), op.line, op.id, op.type.c_str());
      throw_error(Errc::invalid_argument, m);
    }
    auto sh = shapes.find(op.id);
    if (sh != shapes.end()) op.out = tensor(op.id, sh->second);
    else op.out = p.add_tensor(tensor_name("t", op.id), g10_page_round(elems(op.in[0].dims) * 4), false);
    for (auto& in : op.in) in.t = tensor(in.id, shapes[in.id]);
    for (auto& in : op.in) {
      const bool weight = p.tensors[in.t].persistent;
      auto pr = producer.find(in.id);
      const bool produced = pr != producer.end();
      const bool wants_grad = op.type == "Power" ? (!weight && produced) : (weight || produced);
      if (!wants_grad) continue;
      in.d = p.add_tensor(tensor_name("d_t", in.id), p.tensors[in.t].bytes, false);
      if (produced) ops[pr->second].d_out.push_back(in.d);
    }
    if (i + 1 == ops.size()) op.d_out.push_back(p.add_tensor("loss", p.tensors[op.out].bytes, false));
  }
  auto k = [&](const std::string& name, std::vector<TensorId> in, std::vector<TensorId> out) {
    Kernel kr;
    kr.name = name;
    for (TensorId x : in)
      if (x >= 0) kr.reads.push_back(x);
    for (TensorId x : out)
      if (x >= 0) kr.writes.push_back(x);
    p.kernels.push_back(std::move(kr));
  };
  for (const Op& op : ops) {
    std::vector<TensorId> in;
    for (const auto& x : op.in) in.push_back(x.t);
    k(op.type + "_Forward" + tensor_name("#", op.id), in, {op.out});
  }
  k("makeLoss", {ops.back().out}, {ops.back().d_out[0]});
  for (std::size_t r = ops.size(); r-- > 0;) {
    const Op& op = ops[r];
    const std::string sfx = tensor_name("#", op.id);
    const TensorId g = op.d_out.empty() ? -1 : op.d_out[0];
    if (op.d_out.size() > 1) k("Add_MultiGradient" + sfx, op.d_out, {g});
    const OpIn* w = nullptr;
    const OpIn* x = nullptr;
    for (const auto& i : op.in) {
      if (p.tensors[i.t].persistent) w = &i;
      else x = &i;
    }
    auto apply = [&] {
      if (w) k("Apply_Grad" + sfx, {w->t, w->d}, {w->t});
    };
    const std::string& t = op.type;
    if (t == "GatherV2") {
      k("GatherV2_Backward" + sfx, {g, x ? x->t : -1}, {w ? w->d : -1, x ? x->d : -1});
      k("Apply_Grad" + sfx, {w ? w->d : -1, w ? w->t : -1}, {w ? w->t : -1});
    } else if (t == "Dot" || t == "Convolution") {
      const std::string base = t == "Dot" ? "Linear" : "Conv2d";
      k(base + "_Backward_Weight" + sfx, {g, x ? x->t : -1}, {w ? w->d : -1});
      if (x && x->d >= 0) k(base + "_Backward_Input" + sfx, {g, w ? w->t : -1}, {x->d});
      k((t == "Dot" ? "Linear_Apply_Grad_Weight" : "Apply_Grad") + sfx, {w ? w->d : -1, w ? w->t : -1},
        {w ? w->t : -1});
    } else if (t == "Add" || t == "Subtract") {
      std::vector<TensorId> outs;
      for (const auto& i : op.in) outs.push_back(i.d);
      k(t + "_Backward" + sfx, {g}, outs);
      apply();
    } else if (t == "BatchMatMul" || t == "Multiply" || t == "Divide") {
      if (op.in.size() != 2) {
        std::string m;
        appendf(m, "%s:%d: %s needs 2 inputs", net_file.c_str(), op.line, t.c_str());
        throw_error(Errc::invalid_argument, m);
      }
      const OpIn& a = op.in[0];
      const OpIn& b = op.in[1];
      if (t == "Divide") {
        if (a.d >= 0) k("Divide_Backward_A" + sfx, {b.t, g}, {a.d});
        if (b.d >= 0) k("Divide_Backward_B" + sfx, {b.t, op.out, g}, {b.d});
      } else {
        if (a.d >= 0) k(t + "_Backward" + sfx, {g, b.t}, {a.d});
        if (b.d >= 0) k(t + "_Backward" + sfx, {g, a.t}, {b.d});
      }
      apply();
    } else if (t == "Power") {
      std::vector<TensorId> in{g};
      for (const auto& i : op.in) in.push_back(i.t);
      k("Power_Backward" + sfx, in, {op.in[0].d});
    } else if (t == "Relu" || t == "SoftmaxBasic" || t == "Sqrt" || t == "Sum" || t == "Tanh" || t == "Erf") {
      k(t + "_Backward" + sfx, {op.in[0].t, g}, {op.in[0].d});
    } else {
      std::string m;
      appendf(m, "%s:%d: unsupported operator type '%s'", net_file.c_str(), op.line, t.c_str());
      throw_error(Errc::invalid_argument, m);
    }
  }
}

}  // namespace memlake::plan
