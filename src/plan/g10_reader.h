// Reader for G10's published workloads (platformxlab/G10, MICRO'23; data under
// Apache-2.0). A workload is a network and the measured time of every kernel
// of one training iteration at one batch size:
//   DIR/frontend/Nets/<model>.txt        the network: a PyTorch module print
//                                        (CNNs) or a list of operators
//                                        (transformers: BERT_Base, VIT, NeRF)
//   DIR/results/<model>/cudnn<B>.txt     "<kernel> <time> ms", one a line
//   DIR/results/<model>/cudnn<B>Workspace.txt   "<kernel> <bytes> B" (optional)
// From them the reader derives, the way G10's frontend does, the kernels of
// forward, loss and backward with weight updates, and every tensor (activations,
// gradients, weights, cuDNN workspaces) with its size and the kernels using it.
// Malformed input is an InvalidArgument error naming the file and line.
#pragma once

#include <string>

#include "plan/profile.h"

namespace memlake::plan {

struct G10WorkloadOptions {
  int batch = 0;
  // 0: G10's defaults (299 for Inception, 224 for the others).
  int input_hw = 0;
  // Transformers: operator tensor ids below this are weights; -1: G10's
  // value for the model (BERT 210, VIT 184, NeRF 7).
  int weight_border = -1;
};

// DIR and "MODEL/BATCH" as the CLI takes them.
Profile read_g10_workload(const std::string& dir, const std::string& model, const G10WorkloadOptions& opt);

// The pieces, exposed for tests.
// Appends the kernels and tensors of the network file (no times yet).
void read_g10_cnn(const std::string& net_file, int batch, int input_hw, Profile& out);
void read_g10_transformer(const std::string& net_file, int batch, int weight_border, Profile& out);
// Sets each kernel's time from a cudnn<B>.txt file; the count must match.
void read_g10_kernel_times(const std::string& file, Profile& p);
// Adds a workspace tensor written by each kernel that has one.
void read_g10_workspaces(const std::string& file, Profile& p);

// G10 rounds every tensor up to whole 4 KiB pages.
inline std::uint64_t g10_page_round(std::uint64_t b) { return (b + 4095) / 4096 * 4096; }

}  // namespace memlake::plan
