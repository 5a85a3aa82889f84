'use strict';
// node-gyp always writes its output to build/Release (build/Debug with --debug).
module.exports = require('./build/Release/idle_memory.node');
