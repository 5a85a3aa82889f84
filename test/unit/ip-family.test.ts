/**
 * server/util/ip-family.ts (issue 45, decision 0476): `isIP` answers as node:net's for addresses,
 * host names and malformed input, while a string without a colon never reaches Node's IPv6
 * expression.
 */
import { isIP as nodeIsIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isIP } from '../../server/util/ip-family.js';

const INPUTS = [
  '127.0.0.1', '0.0.0.0', '255.255.255.255', '256.1.1.1', '1.2.3', '01.2.3.4', '1.2.3.4 ', ' 1.2.3.4',
  '::', '::1', '::ffff:127.0.0.1', '2001:db8::8a2e:370:7334', 'fe80::1%eth0', '[::1]', '2001:db8:::1', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
  'localhost', 'app.example.test', 'gatehouse.local:8080', '127.0.0.1:80', 'example.com.', '', ':', 'x:y', '\u0661.2.3.4',
];

describe('isIP without the IPv6 expression for strings without a colon', () => {
  it("answers as node:net's isIP", () => {
    expect(INPUTS.map(isIP)).toEqual(INPUTS.map((input) => nodeIsIP(input)));
    expect(INPUTS.map(isIP).filter((family) => family === 6)).toHaveLength(6);
    expect(INPUTS.map(isIP).filter((family) => family === 4)).toHaveLength(3);
  });
});
