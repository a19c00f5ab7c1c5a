#!/usr/bin/env node
// The `mesh-zone` command: the built binary. It exists before the build, so that installing the
// workspace can link the command for the packages that depend on this one.
import '../dist/main.js';
