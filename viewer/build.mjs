#!/usr/bin/env node
// Builds the web viewer into dist/viewer/ (static assets served by `serve`).
// Until the viewer's sources exist this only makes sure the folder is there.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
mkdirSync(join(root, 'dist', 'viewer'), { recursive: true });
