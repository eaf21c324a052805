#!/usr/bin/env node
// Lists the exports of the product's modules (protocol/, reducers/, diff/,
// server/, viewer/src/) that no other module imports; tests, benchmarks,
// scripts and bin/ count as importers. One line per export: file, name,
// value or type, and whether the file itself still uses it ("used-locally":
// only the `export` is dead) or not ("unused"), or it is a re-export.
// `export *` and `import *` or `import()` of a module count as using all of
// it. Run: node scripts/dead-exports.mjs (about a minute and a half).
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const walk = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'fixtures' ? [] : walk(path);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
const product = ['protocol', 'reducers', 'diff', 'server', 'viewer/src'].flatMap(walk).filter((f) => f.endsWith('.ts'));
const importers = [...['test', 'bench', 'scripts', 'bin'].flatMap(walk), 'viewer/build.mjs', 'vitest.config.ts'];
const program = ts.createProgram(
  [...product, ...importers].map((f) => join(root, f)),
  {
    allowJs: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  },
);
const checker = program.getTypeChecker();

/** `file#name` of every export some module imports. */
const used = new Set();
/** Modules imported whole. */
const whole = new Set();

/** The source file a relative specifier names (`bin/` imports the built `dist/` copy of a source). */
function target(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const path = relative(root, resolve(dirname(from), specifier)).replace(/^dist\//, '');
  return path.endsWith('.js') && !path.startsWith('bin/') ? `${path.slice(0, -3)}.ts` : path;
}

for (const sf of program.getSourceFiles()) {
  if (sf.fileName.includes('node_modules')) continue;
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const to = target(sf.fileName, node.moduleSpecifier.text);
      if (to && ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        if (!clause) whole.add(to);
        else {
          if (clause.name) used.add(`${to}#default`);
          const bindings = clause.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) whole.add(to);
          if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) used.add(`${to}#${(e.propertyName ?? e.name).text}`);
        }
      } else if (to) {
        const clause = node.exportClause;
        if (!clause || ts.isNamespaceExport(clause)) whole.add(to);
        else for (const e of clause.elements) used.add(`${to}#${(e.propertyName ?? e.name).text}`);
      }
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      const to = target(sf.fileName, node.arguments[0].text);
      if (to) whole.add(to);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

for (const file of product) {
  if (whole.has(file)) continue;
  const sf = program.getSourceFile(join(root, file));
  const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
  if (!moduleSymbol) continue;
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const name = symbol.getName();
    if (used.has(`${file}#${name}`)) continue;
    const declaration = symbol.declarations?.[0];
    const aliased = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const kind = aliased.flags & ts.SymbolFlags.Value ? 'value' : 'type';
    const reexport = !declaration || declaration.getSourceFile() !== sf || ts.isExportSpecifier(declaration) || ts.isNamespaceExport(declaration);
    const mentions = sf.text.match(new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\b`, 'g'))?.length ?? 0;
    console.log([file, name, kind, reexport ? 're-export' : mentions > 1 ? 'used-locally' : 'unused'].join('\t'));
  }
}
