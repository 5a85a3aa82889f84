/**
 * The Apple configuration profile that installs the local CA on iOS, iPadOS and macOS (Apple,
 * "Configuration Profile Reference" and Device Management "Certificate Root" payload, checked
 * 2025): a `Configuration` profile holding one `com.apple.security.root` payload whose
 * `PayloadContent` is the CA's DER. Unsigned: the device says "Not Verified", which is true of any
 * profile from a LAN appliance, and the fingerprint on the trust page is what the person checks.
 *
 * `PayloadIdentifier` is the same for every CA this server makes (it names the server, not the
 * CA), so installing the profile of a renewed CA replaces the old one instead of adding a second;
 * the UUIDs are derived from the CA, so the same CA always gives the same bytes.
 *
 * iOS still ignores the root for TLS until it is turned on under Settings › General › About ›
 * Certificate Trust Settings (Apple HT204477); the trust page says so.
 */
import { createHash } from 'node:crypto';
import type { LocalCa } from './local-ca.js';

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A version-4-shaped UUID from a digest, so a profile's UUIDs follow from what it holds. */
function uuidFrom(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`.toUpperCase();
}

/** The profile's identifier: by the server's issuer host, the same across CA renewals. */
export function profileIdentifier(issuer: string): string {
  const host = new URL(issuer).hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'server';
  return `local.gatehouse.trust.${host}`;
}

export function mobileconfig(ca: LocalCa, issuer: string): string {
  const id = profileIdentifier(issuer);
  const base64 = ca.der.toString('base64').replace(/.{1,64}/g, '\t\t\t$&\n');
  const host = new URL(issuer).host;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>PayloadContent</key>
	<array>
		<dict>
			<key>PayloadCertificateFileName</key>
			<string>gatehouse-ca.cer</string>
			<key>PayloadContent</key>
			<data>
${base64}			</data>
			<key>PayloadDescription</key>
			<string>Adds the Gatehouse local certificate authority, so this device trusts ${escapeXml(host)} over HTTPS.</string>
			<key>PayloadDisplayName</key>
			<string>Gatehouse local CA</string>
			<key>PayloadIdentifier</key>
			<string>${escapeXml(id)}.root</string>
			<key>PayloadType</key>
			<string>com.apple.security.root</string>
			<key>PayloadUUID</key>
			<string>${uuidFrom(`root ${ca.fingerprintSha256}`)}</string>
			<key>PayloadVersion</key>
			<integer>1</integer>
		</dict>
	</array>
	<key>PayloadDescription</key>
	<string>Trust the Gatehouse sign-in server at ${escapeXml(host)}. After installing, turn it on under Settings › General › About › Certificate Trust Settings.</string>
	<key>PayloadDisplayName</key>
	<string>Gatehouse (${escapeXml(host)})</string>
	<key>PayloadIdentifier</key>
	<string>${escapeXml(id)}</string>
	<key>PayloadRemovalDisallowed</key>
	<false/>
	<key>PayloadType</key>
	<string>Configuration</string>
	<key>PayloadUUID</key>
	<string>${uuidFrom(`profile ${ca.fingerprintSha256}`)}</string>
	<key>PayloadVersion</key>
	<integer>1</integer>
</dict>
</plist>
`;
}
