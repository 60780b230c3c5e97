#line 1 "@INPUT@"
