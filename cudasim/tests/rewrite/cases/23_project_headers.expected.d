@OUTPUT@: \
  @CASES@/23_project_headers.cu \
  @CASES@/23_project_headers/plain.h \
  @CASES@/23_project_headers/kernels.cuh \
  @CASES@/23_project_headers/include_dir/from_include_dir.cuh \
  @CASES@/23_project_headers/forwarding.h \
  @CASES@/23_project_headers/nested/launch.h
