// @ts-check
// The layers of src/ and config/ (docs/architecture.md, "Layers"), held by `npm run lint`.

/**
 * Lowest first. A module imports from its own folder and from the layers below its own: never
 * from a layer above, nor from another folder of its own layer. The composition root,
 * src/composition/, wires the gateway from the layers below it; above it sit only the entry
 * points node runs, the modules directly in src/ (main.ts, healthcheck.ts).
 */
const LAYERS = [
  ['config'],
  ['src/errors', 'src/security', 'src/lifecycle'],
  ['src/logging'],
  ['src/redis', 'src/resilience'],
  ['src/observability', 'src/health'],
  ['src/cache', 'src/upstreams'],
  ['src/state', 'src/sessions'],
  ['src/http'],
  ['src/features'],
  ['src/openapi'],
  ['src/composition'],
  ['src'],
];

/** @param {string} folder */
const pathOf = (folder) => (folder === 'src' ? '^src/[^/]+$' : `^${folder}/`);
/** @param {string[]} folders */
const anyOf = (folders) => `(${folders.map(pathOf).join('|')})`;

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const layerRules = LAYERS.flatMap((layer, rank) =>
  layer.flatMap((folder) => {
    const forbidden = [...LAYERS.slice(rank + 1).flat(), ...layer.filter((f) => f !== folder)];
    if (forbidden.length === 0) return [];
    return {
      name: `layer-${folder.replace(/^src\//, '')}`,
      comment: `${folder} imports only from the layers below it: ${
        LAYERS.slice(0, rank).flat().join(', ') || 'none'
      } (docs/architecture.md, "Layers").`,
      severity: /** @type {const} */ ('error'),
      from: { path: pathOf(folder) },
      to: { path: anyOf(forbidden) },
    };
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle, type-only imports included: move the shared part down a layer.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'not-to-outside',
      comment: 'The product never imports the simulators, the tests or the benchmark.',
      severity: 'error',
      from: { path: '^(src|config)/' },
      to: { path: '^(simulators|test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the cruiser cannot resolve is an import no rule above can see.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle or an upward import through `import type` is one too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
