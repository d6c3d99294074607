// Catalog: einsum, Einstein summation written with diagonal, sum and batched
// matmul: explicit ("ij,jk->ik") or implicit output, ellipsis broadcasting,
// repeated subscripts for diagonals and traces. Operands are contracted left
// to right, each pair as one matmul [batch, a-only, shared] @ [batch,
// shared, b-only] (a broadcast product and sum for integers). PyTorch's
// semantics; see composites.h.
#include <algorithm>
#include <map>
#include <set>

#include "catalog_util.h"
#include "composites.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// A subscript letter is its character; ellipsis dims are kEllipsis + k,
// right-aligned across operands so they broadcast like NumPy's.
using Labels = std::vector<int>;
constexpr int kEllipsis = 1000;

// The letters of one term, with -1 where its ellipsis stands.
Labels parse_term(const std::string& term, const std::string& equation) {
  Labels labels;
  for (size_t i = 0; i < term.size();) {
    if (term.compare(i, 3, "...") == 0) {
      if (std::count(labels.begin(), labels.end(), -1))
        throw ValueError(str("einsum: more than one ellipsis ('...') in the subscripts '", term, "'"));
      labels.push_back(-1);
      i += 3;
    } else if (std::isalpha(static_cast<unsigned char>(term[i])) && static_cast<unsigned char>(term[i]) < 128) {
      labels.push_back(term[i++]);
    } else {
      throw ValueError(str("einsum: invalid subscript '", term[i], "' in the equation '", equation,
                           "'; subscripts must be in [a-zA-Z]"));
    }
  }
  return labels;
}

Labels with_ellipsis(const Labels& term, int64_t own, int64_t rank) {
  Labels out;
  for (int l : term) {
    if (l != -1) out.push_back(l);
    else
      for (int64_t k = rank - own; k < rank; ++k) out.push_back(kEllipsis + int(k));
  }
  return out;
}

std::string label_name(int l) { return l >= kEllipsis ? str("...[", l - kEllipsis, "]") : std::string(1, char(l)); }

// The equation resolved against the operands' shapes.
struct Plan {
  std::vector<Labels> operands;  // one label per dim, ellipses expanded
  Labels out;
  std::map<int, int64_t> size;  // every label's size after broadcasting
};

Plan plan_of(const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 1) != std::string::npos)
    throw ValueError(str("einsum: more than one '->' in the equation '", equation, "'"));
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char ch : lhs) {
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  }
  if (terms.size() != shapes.size())
    throw ValueError(str("einsum: the equation '", equation, "' has ", terms.size(), " operand terms but ",
                         shapes.size(), " operands were given"));
  Plan p;
  int64_t rank = 0;
  std::vector<Labels> parsed;
  std::vector<int64_t> own;
  for (size_t k = 0; k < terms.size(); ++k) {
    parsed.push_back(parse_term(terms[k], equation));
    const bool dots = std::count(parsed[k].begin(), parsed[k].end(), -1) > 0;
    const int64_t letters = int64_t(parsed[k].size()) - dots, nd = int64_t(shapes[k].size());
    if (dots ? nd < letters : nd != letters)
      throw ShapeError(str("einsum: operand ", k, " has ", nd, " dimensions (shape ", shape_str(shapes[k]),
                           ") but its subscripts '", terms[k], "' name ", letters, dots ? " and an ellipsis" : ""));
    own.push_back(nd - letters);
    rank = std::max(rank, nd - letters);
  }
  std::map<int, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    p.operands.push_back(with_ellipsis(parsed[k], own[k], rank));
    const Labels& ls = p.operands.back();
    for (size_t d = 0; d < ls.size(); ++d) {
      const int64_t n = shapes[k][d];
      auto [it, fresh] = p.size.emplace(ls[d], n);
      // Within an operand a repeated label is a diagonal: sizes must agree exactly.
      const bool repeat_here = std::find(ls.begin(), ls.begin() + long(d), ls[d]) != ls.begin() + long(d);
      if (!fresh && it->second != n) {
        if (repeat_here || (it->second != 1 && n != 1))
          throw ShapeError(str("einsum: subscript ", label_name(ls[d]), " has sizes ", it->second, " and ", n,
                               " (operand ", k, ", shape ", shape_str(shapes[k]), "), which do not broadcast"));
        if (it->second == 1) it->second = n;
      }
      if (ls[d] < kEllipsis) ++count[ls[d]];
    }
  }
  if (arrow == std::string::npos) {
    for (int64_t k = 0; k < rank; ++k) p.out.push_back(kEllipsis + int(k));
    for (auto [label, n] : count)  // std::map: ASCII order, upper case first
      if (n == 1) p.out.push_back(label);
  } else {
    const Labels rhs = parse_term(eq.substr(arrow + 2), equation);
    p.out = with_ellipsis(rhs, rank, rank);
    std::set<int> seen;
    for (int l : p.out) {
      if (!p.size.count(l))
        throw ValueError(str("einsum: output subscript ", label_name(l), " does not appear in any operand of '",
                             equation, "'"));
      if (!seen.insert(l).second)
        throw ValueError(str("einsum: output subscript ", label_name(l), " appears more than once in '", equation, "'"));
    }
  }
  return p;
}

// Sums away the labels of x that `keep` does not hold.
std::pair<Tensor, Labels> sum_out(const Tensor& x, const Labels& labels, const std::set<int>& keep) {
  std::vector<int64_t> gone;
  Labels kept;
  for (size_t d = 0; d < labels.size(); ++d) {
    if (keep.count(labels[d])) kept.push_back(labels[d]);
    else gone.push_back(int64_t(d));
  }
  if (gone.empty()) return {x, labels};
  return {call1("sum", {x}, {{"dims", gone}, {"keepdim", false}}), kept};
}

// A label repeated within one operand takes the diagonal of those dims.
std::pair<Tensor, Labels> take_diagonals(Tensor x, Labels labels) {
  auto first_repeat = [&]() -> std::pair<size_t, size_t> {
    for (size_t i = 0; i < labels.size(); ++i)
      for (size_t j = i + 1; j < labels.size(); ++j)
        if (labels[j] == labels[i]) return {i, j};
    return {0, 0};
  };
  for (auto [i, j] = first_repeat(); j != 0; std::tie(i, j) = first_repeat()) {
    x = call1("diagonal", {x}, {{"offset", int64_t(0)}, {"dim1", int64_t(i)}, {"dim2", int64_t(j)}});
    const int label = labels[i];
    Labels rest;
    for (size_t k = 0; k < labels.size(); ++k)
      if (k != i && k != j) rest.push_back(labels[k]);
    rest.push_back(label);
    labels = std::move(rest);
  }
  return {x, labels};
}

int64_t product(const Shape& s) { return numel_of(s); }

// a * b summed over the labels nothing later needs, as one batched matmul.
std::pair<Tensor, Labels> contract(Tensor a, Labels al, Tensor b, Labels bl, const std::set<int>& later,
                                   const std::map<int, int64_t>& size) {
  std::set<int> keep_a = later, keep_b = later;
  keep_a.insert(bl.begin(), bl.end());
  keep_b.insert(al.begin(), al.end());
  std::tie(a, al) = sum_out(a, al, keep_a);
  std::tie(b, bl) = sum_out(b, bl, keep_b);
  auto in = [](const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); };
  auto sizes = [&](const Labels& ls) {
    Shape s;
    for (int l : ls) s.push_back(size.at(l));
    return s;
  };
  a = a.expand(sizes(al));
  b = b.expand(sizes(bl));
  Labels batch, a_only, summed, b_only;
  for (int l : al) (in(bl, l) ? (later.count(l) ? batch : summed) : a_only).push_back(l);
  for (int l : bl)
    if (!in(al, l)) b_only.push_back(l);
  auto order = [](const Labels& of, std::initializer_list<const Labels*> groups) {
    std::vector<int64_t> perm;
    for (const Labels* g : groups)
      for (int l : *g) perm.push_back(std::find(of.begin(), of.end(), l) - of.begin());
    return perm;
  };
  const Shape bs = sizes(batch), ms = sizes(a_only), ks = sizes(summed), ns = sizes(b_only);
  a = a.permute(order(al, {&batch, &a_only, &summed}));
  Labels labels = batch;
  labels.insert(labels.end(), a_only.begin(), a_only.end());
  labels.insert(labels.end(), b_only.begin(), b_only.end());
  Shape out = bs;
  out.insert(out.end(), ms.begin(), ms.end());
  out.insert(out.end(), ns.begin(), ns.end());
  if (summed.empty() || !is_floating(a.dtype())) {
    // A broadcast product [batch, a-only, b-only, shared], the shared labels
    // summed: an outer product, or integers (matmul is floating only).
    b = b.permute(order(bl, {&batch, &b_only, &summed}));
    Shape sa = bs, sb = bs;
    sa.insert(sa.end(), ms.begin(), ms.end());
    sa.insert(sa.end(), ns.size(), 1);
    sa.insert(sa.end(), ks.begin(), ks.end());
    sb.insert(sb.end(), ms.size(), 1);
    sb.insert(sb.end(), ns.begin(), ns.end());
    sb.insert(sb.end(), ks.begin(), ks.end());
    Tensor y = call1("mul", {a.reshape(sa), b.reshape(sb)});
    if (summed.empty()) return {y, labels};
    std::vector<int64_t> shared;
    for (size_t k = 0; k < ks.size(); ++k) shared.push_back(int64_t(out.size() + k));
    return {call1("sum", {y}, {{"dims", shared}, {"keepdim", false}}).to(a.dtype()), labels};
  }
  b = b.permute(order(bl, {&batch, &summed, &b_only}));
  const int64_t B = product(bs), M = product(ms), K = product(ks), N = product(ns);
  return {call1("matmul", {a.reshape({B, M, K}), b.reshape({B, K, N})}).reshape(out), labels};
}

std::vector<Shape> shapes_of(const std::vector<Tensor>& xs) {
  std::vector<Shape> s;
  for (const auto& x : xs) s.push_back(x.shape());
  return s;
}

std::vector<TensorMeta> einsum_infer(const InferContext& c) {
  if (c.inputs.empty()) throw ValueError("einsum: expects at least one operand");
  DType dtype = c.dtype(0);
  for (size_t i = 1; i < c.inputs.size(); ++i)
    if (c.dtype(i) != dtype)
      throw DTypeError(str("einsum: operands must share a dtype after promotion, got ", dtype_name(dtype), " and ",
                           dtype_name(c.dtype(i))));
  Plan p = plan_of(c.attrs.get_string("equation"), shapes_of(c.inputs));
  Shape out;
  for (int l : p.out) out.push_back(p.size.at(l));
  return {{out, dtype}};
}

std::vector<Tensor> einsum_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  const Plan p = plan_of(a.get_string("equation"), shapes_of(in));
  std::vector<std::pair<Tensor, Labels>> terms;
  for (size_t k = 0; k < in.size(); ++k) terms.push_back(take_diagonals(in[k], p.operands[k]));
  // The labels each step must keep: the output's and those of every later operand.
  std::vector<std::set<int>> later(terms.size(), std::set<int>(p.out.begin(), p.out.end()));
  for (size_t k = terms.size(); k-- > 1;) {
    later[k - 1] = later[k];
    later[k - 1].insert(terms[k].second.begin(), terms[k].second.end());
  }
  Tensor y;
  Labels labels;
  std::tie(y, labels) = sum_out(terms[0].first, terms[0].second, later[0]);
  for (size_t k = 1; k < terms.size(); ++k)
    std::tie(y, labels) = contract(y, labels, terms[k].first, terms[k].second, later[k], p.size);
  std::tie(y, labels) = sum_out(y, labels, std::set<int>(p.out.begin(), p.out.end()));
  std::vector<int64_t> perm;
  for (int l : p.out) perm.push_back(std::find(labels.begin(), labels.end(), l) - labels.begin());
  Shape out;
  for (int l : p.out) out.push_back(p.size.at(l));
  // A label only broadcast (size 1 in the one operand that has it) is expanded here.
  y = perm.empty() ? y : y.permute(perm);
  return {y.shape() == out ? y.contiguous() : y.expand(out).contiguous()};
}

}  // namespace

void register_einsum_composite(OpRegistry& r) {
  r.add(composite(make_schema("einsum", {variadic("operands")}, {"y"},
                              {attr("equation", AttrType::kString)}, einsum_infer,
                              "Einstein summation: explicit ('ij,jk->ik') or implicit output, '...' broadcasting, "
                              "repeated subscripts for diagonals; pairs contract as one batched matmul",
                              DTypePolicy::kPromote),
                  einsum_decompose),
        {"([3,4] [4,5]) equation='ij,jk->ik'", "([2,3,4] [2,4,5]) equation='bij,bjk->bik'",
         "([4,4]) equation='ii->i'", "([3,4]) equation='ij->'", "([2,3,4] [4]) equation='...j,j->...'",
         "([3] [4]) equation='i,j'", "([2,3] [3,4] [4,2]) equation='ab,bc,cd->ad'", "([5,3]) equation='ij->ji'"});
}

}  // namespace oar
