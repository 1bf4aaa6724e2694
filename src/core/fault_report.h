// Names the allocation behind a memory fault, for the memory-safety modes
// (MEMLAKE_GUARD, MEMLAKE_QUARANTINE): on the host backend from a SIGSEGV
// handler, on any backend on request (describe()).
//
// The allocator registers guard ranges (the unmapped page after a guarded
// allocation) and quarantined ranges (a freed allocation's unmapped view).
// A SIGSEGV handler looks the faulting address up and prints, on stderr:
//   memlake: out-of-bounds access at 0x..: N bytes past the end of allocation 0x.. (S bytes)
//   memlake: use after free at 0x..: allocation 0x.. (S bytes), freed K frees ago
// and then lets the fault take its default course (the process dies).
// The table is fixed-size and read without locks in the handler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memlake::core::fault {

void install();  // idempotent; chains to a previously installed handler for unknown faults
void add_guard(std::uintptr_t begin, std::uintptr_t end, std::uintptr_t alloc, std::size_t size);
void add_freed(std::uintptr_t begin, std::uintptr_t end, std::uintptr_t alloc, std::size_t size, std::uint64_t free_no);
void remove(std::uintptr_t begin);
void set_free_count(std::uint64_t n);  // frees so far, for "freed K frees ago"
// The report for an address (the same line the handler prints, without the
// newline), or "" when it lies in no guard or quarantined range. For faults
// the process learns of otherwise: a GPU kernel's illegal address, whose
// address comes from the kernel log (Xid 31) or compute-sanitizer.
std::string describe(std::uintptr_t addr);

}  // namespace memlake::core::fault
