#pragma once
// TorchScript models and files the tests build themselves (torch::jit::Module + define()), so no
// Python is needed. Plain C++ in the interface: Qt test files can include it.
#include <string>

namespace nanscope::fixtures {

// Writes a model to `path`. Kinds:
//  "nested"        stem, blocks.{b0,b1} (two instances of one Block type: fc1, act (relu_), fc2,
//                  residual add_), gate (called inside an `if`), a loop over blocks, head.
//                  Input [N,4], output [N,3].
//  "forward-nan"   fc then logp (torch.log of negative values): NaN born in forward at aten::log.
//                  Input [N,4], output [N,3].
//  "backward-nan"  fc then root (torch.sqrt(x - x)): finite forward, NaN born in backward.
//                  Input [N,4], output [N,4].
//  "bad-weights"   fc whose weight holds 2 NaN and 1 +Inf, and a buffer `stats` with one -Inf.
//  "two-inputs"    forward(self, x, mask): fc (Linear 4->3) of x with the bool mask's features zeroed.
//  "token-lm"      emb (an Embedding type: 50 tokens, 16 wide) then head (Linear 16 -> 50).
//                  Input token ids [N,S] (int64), output [N,S,50].
//  "batchnorm"     fc (Linear 4->8), bn (BatchNorm1d, training on batch statistics), head
//                  (Linear 8->4). Input [N,4], output [N,4].
//  "cnn"           a ResNet-18-sized CNN (conv/bn/relu stem, 4 stages of 2 basic blocks with
//                  in-place relu_ and add_, 1x1 downsampling), input [N,3,H,W], output [N,10].
void writeModel(const std::string &kind, const std::string &path, unsigned seed = 1);

// Copies the model at `from` to `to` with the first element of its parameter `name`
// ("blocks.b1.fc2.weight") increased by `by`: the same model but for one weight.
void writeNudgedModel(const std::string &from, const std::string &to, const std::string &name, double by);

// Bad files: "empty", "truncated" (a valid model cut in half), "not-zip" (text), "random"
// (random bytes), "newer-version" (a valid archive claiming format version 99).
void writeBadFile(const std::string &kind, const std::string &path);

// A tensor file as C++ torch::save writes it, and as Python's torch.save does (pickle_save).
void writeTensor(const std::string &path, const std::string &shape, bool pythonFormat, bool integerLabels = false,
                 long classes = 3);

}  // namespace nanscope::fixtures
