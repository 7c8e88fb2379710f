#include "torchscript_fixtures.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace nanscope::fixtures {

namespace {

namespace jit = torch::jit;

jit::Module module(const std::string &type, const std::string &forward)
{
    jit::Module m("__torch__." + type);
    m.register_attribute("training", c10::BoolType::get(), true);
    if (!forward.empty())
        m.define(forward);
    return m;
}

// define() names its source "<string>"; a model scripted from a file carries the file's name and
// lines, as Python's torch.jit.script does. Line 1 is the `def`.
void defineFromFile(jit::Module &m, const std::string &src, const std::string &file)
{
    jit::Parser parser(std::make_shared<jit::Source>(src, file, 1));
    const jit::Def def(parser.parseFunction(/*is_method=*/true));
    const jit::SimpleSelf self(m.type());
    m._ivalue()->compilation_unit()->define(*m.type()->name(), {}, {}, {def}, {jit::nativeResolver()}, &self);
}

// One Linear type shared by every instance (like a scripted nn.Linear).
struct Factory {
    jit::Module linearType = module("Linear", "");
    Factory()
    {
        linearType.register_parameter("weight", torch::zeros({1, 1}), false);
        linearType.register_parameter("bias", torch::zeros({1}), false);
        linearType.define("def forward(self, x):\n    return torch.linear(x, self.weight, self.bias)\n");
    }
    jit::Module linear(int in, int out)
    {
        jit::Module m = linearType.deepcopy();
        m.register_parameter("weight", (torch::randn({out, in}) / std::sqrt(double(in))).requires_grad_(), false);
        m.register_parameter("bias", (torch::randn({out}) * 0.1).requires_grad_(), false);
        return m;
    }
};

jit::Module nested()
{
    Factory f;
    jit::Module relu = module("ReLU", "def forward(self, x):\n    return torch.relu_(x)\n");
    jit::Module block = module("Block", "");
    block.register_module("fc1", f.linear(8, 8));
    block.register_module("act", relu);
    block.register_module("fc2", f.linear(8, 8));
    block.define("def forward(self, x):\n"
                 "    out = self.fc1.forward(x)\n"
                 "    out = self.act.forward(out)\n"
                 "    out = self.fc2.forward(out)\n"
                 "    out.add_(x)\n"
                 "    return out\n");
    jit::Module second = block.deepcopy();  // same type, its own weights
    second.register_module("fc1", f.linear(8, 8));
    second.register_module("fc2", f.linear(8, 8));
    jit::Module blocks = module("Blocks", "");
    blocks.register_module("b0", block);
    blocks.register_module("b1", second);
    blocks.define("def forward(self, x):\n    return self.b1.forward(self.b0.forward(x))\n");
    jit::Module net = module("Net", "");
    net.register_module("stem", f.linear(4, 8));
    net.register_module("gate", f.linear(8, 8));
    net.register_module("blocks", blocks);
    net.register_module("head", f.linear(8, 3));
    net.define("def forward(self, x):\n"
               "    x = self.stem.forward(x)\n"
               "    if bool(x.mean() > -1000.0):\n"
               "        x = self.gate.forward(x)\n"
               "    else:\n"
               "        x = torch.relu(x)\n"
               "    for i in range(2):\n"
               "        x = self.blocks.forward(x)\n"
               "    return self.head.forward(x)\n");
    return net;
}

// A language model's first steps: token ids [N, S] -> emb (an Embedding of 50 tokens, 16 wide)
// -> head (Linear 16 -> 50): logits [N, S, 50].
jit::Module tokenLm()
{
    Factory f;
    jit::Module emb = module("Embedding", "");
    emb.register_parameter("weight", torch::randn({50, 16}).requires_grad_(), false);
    emb.define("def forward(self, x):\n    return torch.embedding(self.weight, x)\n");
    jit::Module net = module("TokenLm", "");
    net.register_module("emb", emb);
    net.register_module("head", f.linear(16, 50));
    net.define("def forward(self, x):\n    return self.head.forward(self.emb.forward(x))\n");
    return net;
}

// forward(x, mask): a bool mask zeroes features before the linear layer.
jit::Module maskedPair()
{
    Factory f;
    jit::Module net = module("MaskedPair", "");
    net.register_module("fc", f.linear(4, 3));
    net.define("def forward(self, x, mask):\n    return self.fc.forward(x.masked_fill(mask, 0.0))\n");
    return net;
}

// fc (Linear 4 -> 8), bn (BatchNorm1d of 8, momentum 0.1, training on batch statistics), head
// (Linear 8 -> 4).
jit::Module batchNormMlp()
{
    Factory f;
    jit::Module bn = module("BatchNorm1d", "");
    bn.register_parameter("weight", torch::ones({8}).requires_grad_(), false);
    bn.register_parameter("bias", torch::zeros({8}).requires_grad_(), false);
    bn.register_parameter("running_mean", torch::zeros({8}), true);
    bn.register_parameter("running_var", torch::ones({8}), true);
    bn.register_parameter("num_batches_tracked", torch::zeros({}, torch::kLong), true);
    bn.define("def forward(self, x):\n"
              "    if self.training:\n"
              "        self.num_batches_tracked.add_(1)\n"
              "    return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, "
              "self.training, 0.1, 1e-05, False)\n");
    jit::Module net = module("BnMlp", "");
    net.register_module("fc", f.linear(4, 8));
    net.register_module("bn", bn);
    net.register_module("head", f.linear(8, 4));
    net.define("def forward(self, x):\n    return self.head.forward(self.bn.forward(self.fc.forward(x)))\n");
    return net;
}

jit::Module twoStage(int in, int out, const std::string &type, const std::string &body)
{
    Factory f;
    jit::Module net = module("Net", "");
    net.register_module("fc", f.linear(4, in));
    jit::Module stage = module(type, "");
    defineFromFile(stage, body, type == "Log" ? "nan_model.py" : "sqrt_model.py");
    net.register_module(type == "Log" ? "logp" : "root", stage);
    net.define(type == "Log" ? "def forward(self, x):\n    return self.logp.forward(self.fc.forward(x))\n"
                             : "def forward(self, x):\n    return self.root.forward(self.fc.forward(x))\n");
    (void)out;
    return net;
}

jit::Module badWeights()
{
    Factory f;
    jit::Module fc = f.linear(4, 3);
    at::Tensor w = fc.attr("weight").toTensor();
    {
        at::NoGradGuard g;
        w[0][1] = NAN;
        w[2][3] = NAN;
        w[1][0] = INFINITY;
    }
    jit::Module net = module("Net", "");
    net.register_module("fc", fc);
    at::Tensor stats = torch::zeros({3});
    stats[2] = -INFINITY;
    net.register_parameter("stats", stats, /*is_buffer=*/true);
    net.define("def forward(self, x):\n    return self.fc.forward(x) + self.stats\n");
    return net;
}

// A ResNet-18-sized CNN (CIFAR-style stem): 11M parameters, 20 conv layers, BatchNorm, in-place
// relu_ and add_.
struct Cnn {
    jit::Module convType = module("Conv2d", "");
    jit::Module bnType = module("BatchNorm2d", "");
    jit::Module relu = module("ReLU", "def forward(self, x):\n    return torch.relu_(x)\n");
    Cnn()
    {
        convType.register_parameter("weight", torch::zeros({1, 1, 1, 1}), false);
        convType.register_attribute("stride", c10::IntType::get(), 1);
        convType.register_attribute("padding", c10::IntType::get(), 1);
        convType.define("def forward(self, x):\n"
                        "    return torch.conv2d(x, self.weight, None, [self.stride, self.stride], "
                        "[self.padding, self.padding])\n");
        bnType.register_parameter("weight", torch::ones({1}), false);
        bnType.register_parameter("bias", torch::zeros({1}), false);
        bnType.register_parameter("running_mean", torch::zeros({1}), true);
        bnType.register_parameter("running_var", torch::ones({1}), true);
        bnType.define("def forward(self, x):\n"
                      "    return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, "
                      "self.training, 0.1, 1e-05, False)\n");
    }
    jit::Module conv(int in, int out, int k, int stride)
    {
        jit::Module m = convType.deepcopy();
        m.register_parameter("weight", (torch::randn({out, in, k, k}) * std::sqrt(2.0 / (in * k * k))).requires_grad_(),
                             false);
        m.setattr("stride", stride);
        m.setattr("padding", k / 2);
        return m;
    }
    jit::Module bn(int c)
    {
        jit::Module m = bnType.deepcopy();
        m.register_parameter("weight", torch::ones({c}).requires_grad_(), false);
        m.register_parameter("bias", torch::zeros({c}).requires_grad_(), false);
        m.register_parameter("running_mean", torch::zeros({c}), true);
        m.register_parameter("running_var", torch::ones({c}), true);
        return m;
    }
    jit::Module block(int in, int out, int stride)
    {
        const bool down = stride != 1 || in != out;
        jit::Module b = module(down ? "DownBlock" : "BasicBlock", "");
        b.register_module("conv1", conv(in, out, 3, stride));
        b.register_module("bn1", bn(out));
        b.register_module("relu", relu.deepcopy());
        b.register_module("conv2", conv(out, out, 3, 1));
        b.register_module("bn2", bn(out));
        if (down) {
            jit::Module ds = module("Downsample", "");
            ds.register_module("conv", conv(in, out, 1, stride));
            ds.register_module("bn", bn(out));
            ds.define("def forward(self, x):\n    return self.bn.forward(self.conv.forward(x))\n");
            b.register_module("downsample", ds);
        }
        b.define(std::string("def forward(self, x):\n"
                             "    out = self.relu.forward(self.bn1.forward(self.conv1.forward(x)))\n"
                             "    out = self.bn2.forward(self.conv2.forward(out))\n") +
                 (down ? "    out += self.downsample.forward(x)\n" : "    out += x\n") +
                 "    return self.relu.forward(out)\n");
        return b;
    }
    jit::Module net()
    {
        Factory f;
        jit::Module n = module("ResNet18", "");
        n.register_module("conv1", conv(3, 64, 3, 1));
        n.register_module("bn1", bn(64));
        n.register_module("relu", relu.deepcopy());
        int in = 64;
        const int widths[4] = {64, 128, 256, 512};
        for (int s = 0; s < 4; ++s) {
            jit::Module stage = module("Stage" + std::to_string(s), "");
            stage.register_module("b0", block(in, widths[s], s == 0 ? 1 : 2));
            stage.register_module("b1", block(widths[s], widths[s], 1));
            stage.define("def forward(self, x):\n    return self.b1.forward(self.b0.forward(x))\n");
            n.register_module("layer" + std::to_string(s + 1), stage);
            in = widths[s];
        }
        n.register_module("fc", f.linear(512, 10));
        n.define("def forward(self, x):\n"
                 "    x = self.relu.forward(self.bn1.forward(self.conv1.forward(x)))\n"
                 "    x = self.layer4.forward(self.layer3.forward(self.layer2.forward(self.layer1.forward(x))))\n"
                 "    x = torch.flatten(torch.adaptive_avg_pool2d(x, [1, 1]), 1)\n"
                 "    return self.fc.forward(x)\n");
        return n;
    }
};

std::vector<std::int64_t> parseShape(const std::string &shape)
{
    std::vector<std::int64_t> dims;
    std::istringstream in(shape);
    std::string part;
    while (std::getline(in, part, 'x'))
        dims.push_back(std::stoll(part));
    return dims;
}

std::string savedBytes(const jit::Module &m)
{
    std::ostringstream out;
    m.save(out);
    return out.str();
}

void writeBytes(const std::string &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

}  // namespace

void writeModel(const std::string &kind, const std::string &path, unsigned seed)
{
    torch::manual_seed(seed);
    jit::Module m("__torch__.Empty");
    if (kind == "nested")
        m = nested();
    else if (kind == "forward-nan")
        m = twoStage(3, 3, "Log", "def forward(self, x):\n    return torch.log(x)\n");
    else if (kind == "backward-nan")
        m = twoStage(4, 4, "SqrtDiff", "def forward(self, x):\n    return torch.sqrt(x - x) + x\n");
    else if (kind == "bad-weights")
        m = badWeights();
    else if (kind == "cnn")
        m = Cnn().net();
    else if (kind == "batchnorm")
        m = batchNormMlp();
    else if (kind == "token-lm")
        m = tokenLm();
    else if (kind == "two-inputs")
        m = maskedPair();
    else
        throw std::invalid_argument("unknown fixture " + kind);
    m.save(path);
}

void writeNudgedModel(const std::string &from, const std::string &to, const std::string &name, double by)
{
    jit::Module m = jit::load(from);
    bool found = false;
    for (const auto &p : m.named_parameters()) {
        if (p.name != name)
            continue;
        torch::NoGradGuard noGrad;
        p.value.view(-1)[0].add_(by);
        found = true;
    }
    if (!found)
        throw std::invalid_argument(from + " has no parameter " + name);
    m.save(to);
}

void writeBadFile(const std::string &kind, const std::string &path)
{
    if (kind == "empty") {
        writeBytes(path, {});
    } else if (kind == "truncated") {
        torch::manual_seed(1);
        const std::string bytes = savedBytes(nested());
        writeBytes(path, bytes.substr(0, bytes.size() / 2));
    } else if (kind == "not-zip") {
        writeBytes(path, "def forward(self, x):\n    return x\n");
    } else if (kind == "random") {
        std::mt19937 rng(42);
        std::string bytes(4096, '\0');
        for (char &c : bytes)
            c = char(rng() & 0xff);
        writeBytes(path, bytes);
    } else if (kind == "newer-version") {
        // A valid archive rewritten with a format version no LibTorch of today reads.
        const std::string good = path + ".good";
        torch::manual_seed(1);
        nested().save(good);
        caffe2::serialize::PyTorchStreamReader reader(good);
        caffe2::serialize::PyTorchStreamWriter writer(path);
        for (const std::string &name : reader.getAllRecords()) {
            if (name == "version" || name == ".data/version" || name == "byteorder" || name == ".data/serialization_id")
                continue;
            auto record = reader.getRecord(name);
            writer.writeRecord(name, std::get<0>(record).get(), std::get<1>(record));
        }
        writer.setMinVersion(99);
        writer.writeEndOfFile();
        std::remove(good.c_str());
    } else {
        throw std::invalid_argument("unknown bad file " + kind);
    }
}

void writeTensor(const std::string &path, const std::string &shape, bool pythonFormat, bool integerLabels, long classes)
{
    torch::manual_seed(3);
    const auto dims = parseShape(shape);
    at::Tensor t = integerLabels ? torch::randint(classes, dims, torch::kLong) : torch::randn(dims);
    if (pythonFormat) {
        const std::vector<char> bytes = torch::pickle_save(t);
        writeBytes(path, std::string(bytes.begin(), bytes.end()));
    } else {
        torch::save(t, path);
    }
}

}  // namespace nanscope::fixtures
