// Builds metaeval's partial plotly.js bundle (scripts/vendor_plotly.sh runs it after `npm ci`), the way plotly's
// own partial bundles are made: lib/core (scatter) and `Plotly.register` of lib/<trace> for each other trace type
// given, bundled and minified by esbuild as an IIFE that defines the global `Plotly`, the attributes' documentation
// strings left out (plotly's dist bundles drop them too), under plotly.js's licence header.
// Usage: node build.mjs OUTFILE BANNER TRACE...
import { readFile, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';

const [outfile, banner, ...traces] = process.argv.slice(2);
const entry = "'use strict';\nvar Plotly = require('plotly.js/lib/core');\n" +
    `Plotly.register([${traces.filter((t) => t !== 'scatter').map((t) => `require('plotly.js/lib/${t}')`).join(', ')}]);\n` +
    'module.exports = Plotly;\n';
// attribute meta data that only plotly's schema documentation reads (its dist bundles drop it the same way)
const STR = String.raw`'(?:[^'\\\n]|\\.)*'`;
const META = [
    new RegExp(String.raw`\b(?:description|hrName):\s*${STR}(?=\s*[,}])\s*,?`, 'g'),
    new RegExp(String.raw`\bdescription:\s*\[(?:\s*${STR}\s*,?)*\s*\]\s*\.join\(\s*${STR}\s*\)(?=\s*[,}])\s*,?`, 'g'),
    new RegExp(String.raw`\b(?:requiredOpts|otherOpts):\s*\[(?:\s*${STR}\s*,?)*\s*\](?=\s*[,}])\s*,?`, 'g'),
];
const stripMeta = {
    name: 'strip-meta',
    setup(b) {
        b.onLoad({ filter: /plotly\.js[\\/]src[\\/].*\.js$/ }, async (args) => {
            let code = await readFile(args.path, 'utf8');
            for (const re of META) code = code.replace(re, '');
            return { contents: code, loader: 'js' };
        });
    },
};
const result = await build({
    stdin: { contents: entry, resolveDir: process.cwd(), sourcefile: 'index.js' },
    bundle: true, minify: true, format: 'iife', globalName: 'Plotly', target: 'es2016',
    define: { global: 'window', 'define.amd': 'false', 'process.env.NODE_DEBUG': 'false' },
    loader: { '.css': 'empty' },  // maplibre-gl's style sheet, required only when a map trace is registered
    plugins: [stripMeta], write: false, outfile, logLevel: 'warning',
});
// the header of plotly.js 4.1.1's dist bundles, fixed (not this year) so that a rebuild gives the same bytes
const header = `/**\n* ${banner}\n* Copyright 2012-2026, Plotly, Inc.\n* All rights reserved.\n* Licensed under the MIT license\n*/\n`;
await writeFile(outfile, header + result.outputFiles[0].text);
