/**
 * OpenWrt (hostapd) access points (spec radius.md, "Presets"). Facts from OpenWrt's
 * package/network/services/hostapd/files/hostapd.sh (the wifi-iface options auth_server,
 * auth_port, auth_secret, acct_server, acct_port, acct_secret, dynamic_vlan, vlan_tagged_interface,
 * vlan_naming; encryption wpa2/wpa3), OpenWrt 23.05; WPA-Enterprise needs wpad or wpad-openssl,
 * not wpad-basic.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { RADIUS_NOTES, RADIUS_SECRET, clientAddressInput, radiusApplication, radiusOffNote, radiusServer } from './radius-family.js';

export const openwrt: Preset = {
  id: 'openwrt',
  name: 'OpenWrt',
  category: 'network',
  protocol: 'radius',
  version: 1,
  summary: 'WPA2/WPA3-Enterprise on OpenWrt routers and access points through hostapd; groups choose the VLAN.',
  inputs: [baseUrlInput('Router address (LuCI)', 'https://router.lan.example'), clientAddressInput('Router address', '192.168.10.1')],
  testedWith: { status: 'documentation', product: 'OpenWrt', version: '23.05', test: null },
  sources: [{ title: 'OpenWrt hostapd.sh (wifi-iface options)', section: 'package/network/services/hostapd/files/hostapd.sh', url: 'https://github.com/openwrt/openwrt/blob/openwrt-23.05/package/network/services/hostapd/files/hostapd.sh', version: '23.05' }],
  caveats: ['Install wpad-openssl (or wpad) instead of wpad-basic-mbedtls first: the basic build has no WPA-Enterprise.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: radiusApplication('OpenWrt'),
  requirements: () => [],
  setup: (c) => {
    const server = radiusServer(c);
    return {
      settings: [
        { label: 'encryption', value: 'wpa2 (or wpa3)' },
        { label: 'auth_server / auth_port', value: `${server.host} / ${server.port}` },
        { label: 'acct_server / acct_port', value: `${server.host} / ${server.acctPort}` },
        { label: 'auth_secret / acct_secret', value: RADIUS_SECRET },
      ],
      files: [{
        name: '/etc/config/wireless (the wifi-iface)',
        content: [
          "config wifi-iface 'office'",
          "\toption device 'radio0'",
          "\toption mode 'ap'",
          "\toption network 'lan'",
          `\toption ssid '${c.app.name.replace(/'/g, '')}'`,
          "\toption encryption 'wpa2'",
          `\toption auth_server '${server.host}'`,
          `\toption auth_port '${server.port}'`,
          `\toption auth_secret '${RADIUS_SECRET}'`,
          `\toption acct_server '${server.host}'`,
          `\toption acct_port '${server.acctPort}'`,
          `\toption acct_secret '${RADIUS_SECRET}'`,
          "\toption dynamic_vlan '1'",
          "\toption vlan_tagged_interface 'eth0'",
          "\toption vlan_naming '0'",
          '',
        ].join('\n'),
      }],
      notes: [...radiusOffNote(c), 'Then: uci commit wireless && wifi reload.', ...RADIUS_NOTES],
    };
  },
};
