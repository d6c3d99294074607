// The program of the `fused_elementwise` op: a chain of kp functors
// (unary_ops.def / binary_ops.def, by op name) over registers. Registers
// 0..k-1 hold the op's k inputs; instruction i writes register k+i; the last
// register is the output. The graph's fusion pass writes it and kernels and
// the core's decomposition read it, so the text format lives in one place:
//
//   "<op> <p0> <p1> <a> [<b>];..."     e.g. "mul 0x0p+0 0x0p+0 0 1;exp 0x0p+0 0x0p+0 2"
//
// p0/p1 are the functor's parameters (clamp's bounds, leaky_relu's slope) in
// C99 hexadecimal, exact. Header-only; no oar core dependency.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace oar::sdk {

struct FusedInstruction {
  std::string op;
  double p0 = 0, p1 = 0;
  int a = -1, b = -1;  // register indices; b is -1 for a unary functor
};

inline std::string format_fused_program(const std::vector<FusedInstruction>& program) {
  std::string out;
  char buf[64];
  for (const auto& ins : program) {
    if (!out.empty()) out += ';';
    out += ins.op;
    std::snprintf(buf, sizeof(buf), " %a %a %d", ins.p0, ins.p1, ins.a);
    out += buf;
    if (ins.b >= 0) {
      out += ' ';
      out += std::to_string(ins.b);
    }
  }
  return out;
}

// Throws std::invalid_argument naming the problem: malformed text, or a
// register read before it is written (`num_inputs` registers exist at the start).
inline std::vector<FusedInstruction> parse_fused_program(const std::string& text, int num_inputs) {
  std::vector<FusedInstruction> program;
  std::stringstream all(text);
  std::string item;
  while (std::getline(all, item, ';')) {
    std::istringstream in(item);
    FusedInstruction ins;
    std::string p0, p1;
    if (!(in >> ins.op >> p0 >> p1 >> ins.a))
      throw std::invalid_argument("fused_elementwise: malformed instruction '" + item + "'");
    char* end = nullptr;
    ins.p0 = std::strtod(p0.c_str(), &end);
    if (*end != '\0') throw std::invalid_argument("fused_elementwise: bad parameter '" + p0 + "'");
    ins.p1 = std::strtod(p1.c_str(), &end);
    if (*end != '\0') throw std::invalid_argument("fused_elementwise: bad parameter '" + p1 + "'");
    if (!(in >> ins.b)) ins.b = -1;
    int defined = num_inputs + int(program.size());
    if (ins.a < 0 || ins.a >= defined || ins.b >= defined)
      throw std::invalid_argument("fused_elementwise: instruction '" + item + "' reads a register not yet written");
    program.push_back(ins);
  }
  if (program.empty()) throw std::invalid_argument("fused_elementwise: empty program");
  return program;
}

}  // namespace oar::sdk
