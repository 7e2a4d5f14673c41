#include "models/seed_cnn.h"

#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/pooling.h"

namespace tenfold::models {

std::unique_ptr<Sequential> seed_cnn() {
  return std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input({28, 28, 1}),
      std::make_shared<layers::Conv2D>(layers::Conv2DOptions{
          .filters = 32, .kernel_size = {3, 3}, .activation = "relu"}),
      std::make_shared<layers::MaxPooling2D>(),
      std::make_shared<layers::Flatten>(),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 128, .activation = "relu"}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 10, .activation = "softmax"}),
  });
}

}  // namespace tenfold::models
