#include "bench/bench_models.h"

#include "probe/observed_sequential.h"
#include "scenarios/scenarios.h"

#include <torch/torch.h>

namespace nanscope {

RunSetup benchSetup(const std::string &model)
{
    namespace nn = torch::nn;
    torch::manual_seed(7);
    RunSetup s;
    std::unique_ptr<ObservedSequential> m;
    if (model == "mlp") {
        m = stableModel();
        s.data = randomClassification(512, 100, 10);
        s.optimizer = OptimizerKind::AdamW;
    } else if (model == "cnn") {
        m = std::make_unique<ObservedSequential>("SmallCNN");
        m->add("conv1", nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1))));
        m->add("relu1", nn::AnyModule(nn::ReLU()));
        m->add("pool1", nn::AnyModule(nn::MaxPool2d(2)));
        m->add("conv2", nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1))));
        m->add("relu2", nn::AnyModule(nn::ReLU()));
        m->add("pool2", nn::AnyModule(nn::MaxPool2d(2)));
        m->add("flatten", nn::AnyModule(nn::Flatten()));
        m->add("fc", nn::AnyModule(nn::Linear(32 * 8 * 8, 10)));
        m->finalize();
        s.data = {torch::randn({512, 3, 32, 32}), torch::randint(10, {512}, torch::kLong)};
        s.optimizer = OptimizerKind::AdamW;
    } else {
        m = std::make_unique<ObservedSequential>("DeepMLP");
        for (int i = 0; i < 30; ++i) {
            m->add("fc" + std::to_string(i + 1), nn::AnyModule(nn::Linear(i == 0 ? 100 : 64, 64)));
            m->add("relu" + std::to_string(i + 1), nn::AnyModule(nn::ReLU()));
        }
        m->add("head", nn::AnyModule(nn::Linear(64, 10)));
        m->finalize();
        s.data = randomClassification(512, 100, 10);
    }
    s.model = std::move(m);
    return s;
}

}  // namespace nanscope
