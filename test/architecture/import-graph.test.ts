/**
 * The layering of docs/architecture.md, checked on the sources: an import
 * (value or type-only) only goes down the layers, the viewer imports
 * nothing from server/, and no value imports go round in a cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The folders checked, as docs/architecture.md lists them. */
const SOURCES = ['protocol', 'reducers', 'diff', 'server', 'viewer/src'];

/**
 * Each module's layer, as docs/architecture.md lists them: the first prefix
 * that matches decides. Within a layer a module may import its neighbours;
 * a larger number is higher up.
 */
const LAYERS: [prefix: string, layer: number][] = [
  // 1. Shared by the server and the viewer.
  ['protocol/', 1],
  ['reducers/', 1],
  ['diff/', 1],
  // 1. The small helpers at the top of server/ (files only; folders are matched below).
  ...['paths', 'path-bytes', 'git-path', 'file-uri', 'ulid', 'serial-queue', 'containment', 'private-files', 'domain-error', 'events', 'method-table'].map(
    (name): [string, number] => [`server/${name}.ts`, 1.1],
  ),
  // 2. The engine and the channel store.
  ...['store', 'snapshot', 'watch', 'diff', 'changes', 'disk', 'channels'].map((dir): [string, number] => [`server/${dir}/`, 2]),
  // 3. Sessions.
  ['server/session/', 3],
  // 4. What serves methods over sessions.
  ...['changesets', 'operations', 'harness', 'auto-turns', 'mirror', 'comments', 'provenance'].map((dir): [string, number] => [`server/${dir}/`, 4]),
  // 5. The server: connections, transport, security, the registry of running servers; then app.ts and service.ts.
  ...['connection', 'transport', 'security', 'registry'].map((dir): [string, number] => [`server/${dir}/`, 5]),
  ['server/app.ts', 5.1],
  ['server/service.ts', 5.2],
  // 6. The client side, the hooks and the MCP server over it, the command on top.
  ['server/client/', 6],
  ['server/hook/', 6.1],
  ['server/mcp/', 6.1],
  ['server/cli/', 6.2],
  // The viewer, a browser bundle: checked by its own rule below.
  ['viewer/src/', 7],
];

/** What the viewer may import besides itself: the shared folders of layer 1. */
const VIEWER_MAY_IMPORT = ['protocol/', 'reducers/', 'diff/', 'viewer/src/'];

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function layerOf(file: string): number {
  const found = LAYERS.find(([prefix]) => file === prefix || file.startsWith(prefix));
  if (!found) throw new Error(`${file} is in no layer: add it to docs/architecture.md and to this test`);
  return found[1];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// `import … from '…'` and `export … from '…'` (the clause may span lines), side-effect imports, and `import('…')`.
const STATIC = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT = /^\s*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** True when every name in the braces is marked `type` (the import is erased). */
function onlyTypes(clause: string): boolean {
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(join(root, file), 'utf8');
  const edges: Edge[] = [];
  const add = (specifier: string, typeOnly: boolean): void => {
    if (!specifier.startsWith('.')) return;
    const target = relative(root, resolve(root, dirname(file), specifier.replace(/\.js$/, '.ts')));
    edges.push({ from: file, to: target, typeOnly });
  };
  for (const m of text.matchAll(STATIC)) add(m[4]!, m[2] !== undefined || onlyTypes(m[3]!));
  for (const m of text.matchAll(SIDE_EFFECT)) add(m[1]!, false);
  for (const m of text.matchAll(DYNAMIC)) add(m[1]!, false);
  return edges;
}

/** The value-import cycles: strongly connected components of more than one module (Tarjan). */
function valueCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('the import graph', () => {
  const files = SOURCES.flatMap(sourceFiles);
  const known = new Set(files);
  const edges = files.flatMap(importsOf).filter((e) => known.has(e.to));

  it('reads the sources and their imports', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(edges.filter((e) => e.typeOnly).length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(1000);
  });

  it('has no import, value or type-only, that runs back up the layers', () => {
    const up = edges
      .filter((e) => !e.from.startsWith('viewer/') && layerOf(e.to) > layerOf(e.from))
      .map((e) => `${e.from} (layer ${layerOf(e.from)}) imports ${e.to} (layer ${layerOf(e.to)})${e.typeOnly ? ', type-only' : ''}`);
    expect(up).toEqual([]);
  });

  it('has the viewer import only the shared folders and itself', () => {
    const outside = edges
      .filter((e) => e.from.startsWith('viewer/') && !VIEWER_MAY_IMPORT.some((prefix) => e.to.startsWith(prefix)))
      .map((e) => `${e.from} imports ${e.to}`);
    expect(outside).toEqual([]);
  });

  it('has no cycle of value imports', () => {
    expect(valueCycles(edges)).toEqual([]);
  });
});
