// Validates every Kubernetes object of a rendered manifest (stdin, YAML
// stream) against the API's OpenAPI schemas as npm's kubernetes-models
// carries them (its classes' validate(), ajv underneath). Node modules
// are looked up in NODE_PATH's first entry (the test installs them there).
// Prints "ok - ..." / "not ok - ..." per object; exit 1 on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = (process.env.NODE_PATH || '').split(':')[0];
const load = (m) => import(pathToFileURL(path.join(root, m, 'index.js')).href);
const yaml = (await import(pathToFileURL(path.join(root, 'js-yaml', 'index.js')).href)).default;
const docs = yaml.loadAll(fs.readFileSync(0, 'utf8')).filter(Boolean);
let bad = 0;
for (const d of docs) {
  const what = `${d.apiVersion} ${d.kind} ${d.metadata && d.metadata.name}`;
  const [group, version] = d.apiVersion.includes('/') ? d.apiVersion.split('/') : [null, d.apiVersion];
  let mod;
  try {
    mod = await load(path.join('kubernetes-models', group ? `${group}/${version}` : version));
  } catch (e) {
    console.log(`not ok - ${what}: no schema (${e.message})`); bad++; continue;
  }
  if (!mod[d.kind]) { console.log(`not ok - ${what}: no schema for the kind`); bad++; continue; }
  try {
    new mod[d.kind](d).validate();
    console.log(`ok - ${what} validates`);
  } catch (e) {
    console.log(`not ok - ${what}: ${e.message.split('\n').slice(0, 4).join(' | ')}`); bad++;
  }
}
console.log(`${docs.length - bad} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
