// examples/engine/exports.cpp: libpwengine.so's code is pwe_core; pwengine.map exports pwe_*.
