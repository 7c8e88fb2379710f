# LibTorch straight from a pip wheel's torch package directory, without find_package(Torch).
# A CUDA wheel's TorchConfig insists on a CUDA toolkit (nvcc) even though the wheel carries its
# CUDA runtime; a GPU machine with only `pip install torch` has none. Linking the wheel's shared
# libraries directly needs no toolkit.
#
# In: NANSCOPE_TORCH_WHEEL (…/site-packages/torch), NANSCOPE_TORCH_CXX11_ABI (0 or 1, from
# torch._C._GLIBCXX_USE_CXX11_ABI). Out: TORCH_LIBRARIES, TORCH_CXX_FLAGS, TORCH_INCLUDE_DIRS and
# TORCH_INSTALL_PREFIX, as find_package sets them.
set(NANSCOPE_TORCH_CXX11_ABI "1" CACHE STRING "the wheel's _GLIBCXX_USE_CXX11_ABI (0 or 1)")

set(_wheel "${NANSCOPE_TORCH_WHEEL}")
if(NOT EXISTS "${_wheel}/include/torch/csrc/api/include/torch/torch.h")
  message(FATAL_ERROR "NANSCOPE_TORCH_WHEEL=${_wheel} holds no LibTorch headers (include/torch/csrc/api/include)")
endif()

add_library(nanscope_torch INTERFACE IMPORTED GLOBAL)
target_include_directories(nanscope_torch SYSTEM INTERFACE "${_wheel}/include" "${_wheel}/include/torch/csrc/api/include")
set(_libs)
foreach(_name torch torch_cpu c10)
  find_library(_lib_${_name} NAMES ${_name} PATHS "${_wheel}/lib" NO_DEFAULT_PATH REQUIRED)
  list(APPEND _libs "${_lib_${_name}}")
endforeach()
# CUDA kernels register themselves when libtorch_cuda loads: link it even though no symbol of it
# is referenced, or torch::cuda::is_available() says false.
foreach(_name torch_cuda c10_cuda)
  find_library(_lib_${_name} NAMES ${_name} PATHS "${_wheel}/lib" NO_DEFAULT_PATH)
  if(_lib_${_name})
    list(APPEND _libs "-Wl,--no-as-needed" "${_lib_${_name}}" "-Wl,--as-needed")
    set(NANSCOPE_TORCH_HAS_CUDA ON)
  endif()
endforeach()
target_link_libraries(nanscope_torch INTERFACE ${_libs} Threads::Threads)
set_target_properties(nanscope_torch PROPERTIES INTERFACE_LINK_DIRECTORIES "${_wheel}/lib")

set(TORCH_LIBRARIES nanscope_torch)
set(TORCH_INSTALL_PREFIX "${_wheel}")
set(TORCH_INCLUDE_DIRS "${_wheel}/include" "${_wheel}/include/torch/csrc/api/include")
set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=${NANSCOPE_TORCH_CXX11_ABI}")
set(CMAKE_BUILD_RPATH "${_wheel}/lib")
message(STATUS "LibTorch from the wheel at ${_wheel} (CXX11 ABI ${NANSCOPE_TORCH_CXX11_ABI}, CUDA ${NANSCOPE_TORCH_HAS_CUDA})")
