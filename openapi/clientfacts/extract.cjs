// Reads the API surface of one version of the official TypeScript client
// (oz-agent-sdk) and prints it as facts in the shape of package
// openapi/facts (operations keyed "METHOD /path", named schemas), as JSON on
// standard output, with the client and version they came from. Only
// structure is kept: names, types, enums, nullability, required-ness.
// Descriptions and code are not.
//
//	node openapi/clientfacts/extract.cjs [--typescript DIR] CLIENT
//
// CLIENT is either a checkout of the client's source (a directory holding
// api.md, which lists every method with its HTTP method and path) or an
// unpacked npm package of it (package.json and resources/**/*.d.ts, the
// declaration files; the method and path of each call come from the
// compiled .js beside each .d.ts, the only place a package keeps them).
// The TypeScript compiler that reads it is the checkout's own
// (node_modules/typescript) unless --typescript names one: a package ships
// none. `make client-facts-ts` and `make client-facts-npm` run this and
// write the canonical files.
'use strict';
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
let typescriptDir = '';
if (args[0] === '--typescript') {
  typescriptDir = args[1] || '';
  args.splice(0, 2);
}
const checkout = path.resolve(args[0] || '');
const fromSource = fs.existsSync(path.join(checkout, 'api.md'));
if (!args[0] || (!fromSource && !fs.existsSync(path.join(checkout, 'resources')))) {
  fail('usage: node extract.cjs [--typescript DIR] <oz-sdk-typescript checkout (holding api.md) or unpacked npm package (holding resources/)>');
}
let ts;
try {
  ts = require(typescriptDir ? path.resolve(typescriptDir) : path.join(checkout, 'node_modules', 'typescript'));
} catch (e) {
  fail(`cannot load a TypeScript compiler (${e.message}); run npm install in ${checkout} or name one with --typescript`);
}
const pkg = JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8'));

function fail(msg) {
  process.stderr.write('clientfacts: ' + msg + '\n');
  process.exit(1);
}

const methods = fromSource ? sourceMethods() : packageMethods();
if (methods.length === 0) fail('found no methods');

// sourceMethods reads api.md: <code title="get /agent/runs/{runId}">
// client.agent.runs.<a href="./src/resources/agent/runs.ts">retrieve</a>(...
function sourceMethods() {
  const methodLine = /<code title="(get|post|put|patch|delete) ([^"]+)">client\.([\w.]+)\.<a href="\.\/([^"]+)">(\w+)<\/a>/g;
  const apiMd = fs.readFileSync(path.join(checkout, 'api.md'), 'utf8');
  const found = [];
  for (const m of apiMd.matchAll(methodLine)) {
    found.push({ verb: m[1].toUpperCase(), route: m[2], resource: m[3], file: path.join(checkout, m[4]), name: m[5] });
  }
  return found;
}

// packageMethods reads every resources/**/X.js of a package for the calls
// its methods make (this._client.get(path`/agent/runs/${runID}`, options))
// and pairs each with the declaration in X.d.ts. A path parameter is named
// after the method's argument with a trailing "ID" written "Id" (runID ->
// runId), as the client's own api.md and the document name them.
function packageMethods() {
  const found = [];
  const call = /^ {4}(\w+)\([^)]*\) \{\n\s+return this\._client\.(get|post|put|patch|delete|getAPIList)\((?:\(0, path_1\.path\) )?[`'"]([^`'"]+)[`'"]([^\n]*(?:\n(?! {4}\}).*)*)/gm;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) { walk(full); continue; }
      if (!entry.name.endsWith('.js')) continue;
      const js = fs.readFileSync(full, 'utf8');
      const rel = path.relative(path.join(checkout, 'resources'), full).replace(/\.js$/, '').split(path.sep);
      // resources/agent/agent.js is the resource "agent", resources/agent/runs.js "agent.runs".
      if (rel.length > 1 && rel[rel.length - 1] === rel[rel.length - 2]) rel.pop();
      for (const m of js.matchAll(call)) {
        const verb = m[2] === 'getAPIList' ? 'GET' : m[2].toUpperCase();
        const route = m[3].replace(/\$\{(\w+?)(ID)?\}/g, (_, name, id) => '{' + name + (id ? 'Id' : '') + '}');
        found.push({ verb, route, resource: rel.join('.'), file: full.replace(/\.js$/, '.d.ts'), name: m[1], public: /__security:\s*\{\s*\}/.test(m[4]) });
      }
    }
  };
  walk(path.join(checkout, 'resources'));
  return found.sort((a, b) => (a.resource + a.name).localeCompare(b.resource + b.name));
}

const files = [...new Set(methods.map((m) => m.file))];
const program = ts.createProgram(files, { strict: true, target: ts.ScriptTarget.ES2020, noEmit: true });
const checker = program.getTypeChecker();

const out = {
  client: {
    language: 'typescript',
    package: pkg.name,
    version: pkg.version,
    source: fromSource ? 'source checkout (api.md, src/resources)' : 'npm package declaration files (resources/**/*.d.ts)',
  },
  operations: {},
  schemas: {},
};
// owners records which declaration a schema name came from, so that two
// different types of one name are an error rather than a silent merge.
const owners = new Map();

for (const m of methods) {
  const source = program.getSourceFile(m.file);
  if (!source) fail(`${m.file}: not found`);
  const decl = findMethod(source, m.name);
  if (!decl) fail(`${m.file}: no method ${m.name} in a resource class`);
  const body = decl.body ? decl.body.getText(source) : '';
  const op = {
    operation_id: m.resource + '.' + m.name,
    // A method sending `__security: {}` goes without the client's key.
    security: (m.public || /__security:\s*\{\s*\}/.test(body)) ? ['none'] : ['bearerAuth'],
    responses: {},
  };
  const pathParams = [...m.route.matchAll(/\{(\w+)\}/g)].map((x) => x[1]);
  let pathIndex = 0;
  for (const p of decl.parameters) {
    const pname = p.name.getText(source);
    if (pname === 'options') continue;
    if (pname === 'query' || pname === 'body' || pname === 'params') {
      const schema = convert(p.type);
      const where = pname === 'params' ? (/\bbody\b/.test(body) ? 'body' : 'query') : pname;
      if (where === 'body') {
        op.request_body = { required: !p.questionToken && !p.initializer && !nullable(p.type), content: { 'application/json': schema } };
      } else {
        op.parameters = op.parameters || {};
        for (const [name, s] of Object.entries(objectProperties(schema))) {
          // The client writes arrays as repeated keys (state=A&state=B) and
          // objects in brackets (metadata[k]=v): form and deepObject.
          const style = isObject(s.schema) ? 'deepObject' : 'form';
          op.parameters['query ' + name] = { required: s.required, style, explode: true, schema: s.schema };
        }
      }
      continue;
    }
    const name = pathParams[pathIndex++];
    if (!name) fail(`${m.verb} ${m.route}: parameter ${pname} has no place in the path`);
    op.parameters = op.parameters || {};
    op.parameters['path ' + name] = { required: true, style: 'simple', schema: convert(p.type) };
  }
  op.responses['2XX'] = response(decl.type);
  out.operations[m.verb + ' ' + m.route] = op;
}

// api.md also lists the types each resource exports; those no operation
// reaches (Error, the body of every failure) are facts too. A package has
// no such list: its facts are what its operations reach.
const typeLine = /<code><a href="\.\/([^"]+)">(\w+)<\/a><\/code>/g;
const apiMd = fromSource ? fs.readFileSync(path.join(checkout, 'api.md'), 'utf8') : '';
for (const t of apiMd.matchAll(typeLine)) {
  const source = program.getSourceFile(path.join(checkout, t[1]));
  if (!source) fail(`${t[1]}: not found`);
  const decl = source.statements.find((s) =>
    (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === t[2]);
  if (!decl) fail(`${t[1]}: no type ${t[2]}`);
  if (ts.isInterfaceDeclaration(decl)) named(decl, () => object(decl.members, decl.heritageClauses || [], {}));
  else named(decl, () => convert(decl.type, {}));
}

process.stdout.write(JSON.stringify(out, null, 2) + '\n');

function findMethod(source, name) {
  let found;
  ts.forEachChild(source, (node) => {
    if (!ts.isClassDeclaration(node)) return;
    for (const member of node.members) {
      if (ts.isMethodDeclaration(member) && member.name.getText(source) === name) found = member;
    }
  });
  return found;
}

function nullable(typeNode) {
  return !!typeNode && ts.isUnionTypeNode(typeNode) && typeNode.types.some(isNullish);
}

function isNullish(t) {
  return t.kind === ts.SyntaxKind.UndefinedKeyword ||
    (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword);
}

// response turns a method's return type (APIPromise<T>, PagePromise<Page, T>)
// into the facts of its success answer.
function response(typeNode) {
  if (!typeNode || !ts.isTypeReferenceNode(typeNode) || !typeNode.typeArguments) fail('a method without a promised type');
  const wrapper = typeNode.typeName.getText();
  if (wrapper === 'PagePromise') return { content: { 'application/json': page(typeNode.typeArguments[0]) } };
  const t = typeNode.typeArguments[0];
  if (t.kind === ts.SyntaxKind.VoidKeyword) return {};
  return { content: { 'application/json': convert(t) } };
}

// page reads a page class (RunsCursorPage<RunItem>): the fields it declares
// itself are the body of one page, its type argument the item.
function page(typeNode) {
  const alias = declarationOf(typeNode.typeName);
  const ref = ts.isTypeAliasDeclaration(alias) ? alias.type : typeNode;
  const cls = declarationOf(ref.typeName);
  const item = ref.typeArguments[0];
  const generic = cls.typeParameters[0].name.text;
  const schema = { type: 'object', properties: {}, required: [] };
  for (const member of cls.members) {
    if (!ts.isPropertyDeclaration(member)) continue;
    const name = member.name.getText();
    schema.properties[name] = convert(member.type, { [generic]: item });
    if (!member.questionToken) schema.required.push(name);
  }
  schema.required.sort();
  return schema;
}

function declarationOf(name) {
  let sym = checker.getSymbolAtLocation(name);
  if (!sym) fail(`cannot resolve ${name.getText()}`);
  if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
  return sym.declarations[0];
}

// qualifiedName names a declaration by its namespaces: RunItem.RequestUsage.
function qualifiedName(decl) {
  const parts = [decl.name.text];
  for (let n = decl.parent; n; n = n.parent) {
    if (ts.isModuleDeclaration(n)) parts.unshift(n.name.text);
  }
  return parts.join('.');
}

function named(decl, build) {
  const owner = decl.getSourceFile().fileName + ':' + decl.pos;
  let name = qualifiedName(decl);
  if (owners.has(name) && owners.get(name) !== owner) {
    // Two files declare a type of this name (agent.ts and agent_.ts both
    // have AgentListParams): the later one in api.md's order is named
    // after its file too.
    name = path.basename(decl.getSourceFile().fileName, '.ts') + '.' + name;
  }
  if (!owners.has(name)) {
    owners.set(name, owner);
    out.schemas[name] = {}; // placeholder: a recursive reference ends here
    out.schemas[name] = build();
  }
  return { $ref: name };
}

// convert turns a type written in the client's source into a schema.
function convert(node, generics = {}) {
  if (!node) return {};
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword: return { type: 'string' };
    case ts.SyntaxKind.NumberKeyword: return { type: 'number' };
    case ts.SyntaxKind.BooleanKeyword: return { type: 'boolean' };
    case ts.SyntaxKind.UnknownKeyword:
    case ts.SyntaxKind.AnyKeyword: return {};
  }
  if (ts.isParenthesizedTypeNode(node)) return convert(node.type, generics);
  if (ts.isLiteralTypeNode(node)) {
    if (ts.isStringLiteral(node.literal)) return { type: 'string', enum: [node.literal.text] };
    if (node.literal.kind === ts.SyntaxKind.TrueKeyword || node.literal.kind === ts.SyntaxKind.FalseKeyword) {
      return { type: 'boolean', enum: [node.literal.kind === ts.SyntaxKind.TrueKeyword] };
    }
    if (ts.isNumericLiteral(node.literal)) return { type: 'number', enum: [Number(node.literal.text)] };
  }
  if (ts.isArrayTypeNode(node)) return { type: 'array', items: convert(node.elementType, generics) };
  if (ts.isUnionTypeNode(node)) return union(node, generics);
  if (ts.isTypeLiteralNode(node)) return object(node.members, [], generics);
  if (ts.isTypeReferenceNode(node)) {
    const text = node.typeName.getText();
    if (generics[text]) return convert(generics[text]);
    if (text === 'Array' && node.typeArguments) return { type: 'array', items: convert(node.typeArguments[0], generics) };
    if (text === 'Record' && node.typeArguments) {
      return { type: 'object', additional_properties: convert(node.typeArguments[1], generics) };
    }
    const decl = declarationOf(node.typeName);
    if (ts.isInterfaceDeclaration(decl)) return named(decl, () => object(decl.members, decl.heritageClauses || [], {}));
    if (ts.isTypeAliasDeclaration(decl)) return named(decl, () => convert(decl.type, {}));
    fail(`unsupported reference ${text}`);
  }
  fail(`unsupported type ${node.getText()} (${ts.SyntaxKind[node.kind]})`);
}

function union(node, generics) {
  const members = node.types.filter((t) => !isNullish(t));
  const nullableUnion = members.length !== node.types.length;
  let schema;
  const strings = members.every((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal));
  if (strings) {
    schema = { type: 'string', enum: members.map((t) => t.literal.text).sort() };
  } else if (members.length === 1) {
    schema = convert(members[0], generics);
  } else {
    schema = { one_of: members.map((t) => convert(t, generics)) };
  }
  if (nullableUnion && node.types.some((t) => ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword)) {
    schema = Object.assign({}, schema, { nullable: true });
  }
  return schema;
}

function object(members, heritage, generics) {
  const schema = { type: 'object' };
  const properties = {};
  const required = [];
  for (const clause of heritage) {
    for (const t of clause.types) {
      const base = declarationOf(t.expression);
      const inherited = object(base.members, base.heritageClauses || [], {});
      Object.assign(properties, inherited.properties || {});
      required.push(...(inherited.required || []));
    }
  }
  for (const member of members) {
    if (ts.isIndexSignatureDeclaration(member)) {
      schema.additional_properties = convert(member.type, generics);
      continue;
    }
    if (!ts.isPropertySignature(member)) continue;
    const name = member.name.getText().replace(/^['"]|['"]$/g, '');
    properties[name] = convert(member.type, generics);
    if (!member.questionToken) required.push(name);
  }
  if (Object.keys(properties).length) schema.properties = properties;
  if (required.length) schema.required = [...new Set(required)].sort();
  return schema;
}

function isObject(schema) {
  const s = schema.$ref ? out.schemas[schema.$ref] : schema;
  return s.type === 'object';
}

// objectProperties lists an object schema's properties with their
// required-ness, following a reference.
function objectProperties(schema) {
  const s = schema.$ref ? out.schemas[schema.$ref] : schema;
  const result = {};
  for (const [name, p] of Object.entries(s.properties || {})) {
    result[name] = { required: (s.required || []).includes(name), schema: p };
  }
  return result;
}
