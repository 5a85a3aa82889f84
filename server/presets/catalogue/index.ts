/**
 * The catalogue: every preset, in the order the panel lists them (apps first, then libraries,
 * forward-auth, LDAP, mail, network gear and SAML apps). A test checks ids are unique and each preset is well formed.
 */
import type { Preset } from '../types.js';
import { apacheModAuthOpenidc } from './apache-mod-auth-openidc.js';
import { audiobookshelf } from './audiobookshelf.js';
import { awsIamIdentityCenter } from './aws-iam-identity-center.js';
import { bookstack } from './bookstack.js';
import { nextcloudSaml } from './nextcloud-saml.js';
import { samlGeneric } from './saml-generic.js';
import { snipeIt } from './snipe-it.js';
import { wikijs } from './wikijs.js';
import { zammad } from './zammad.js';
import { authjs } from './authjs.js';
import { djangoSocialAuth } from './django-social-auth.js';
import { dovecot } from './dovecot.js';
import { expressOpenidConnect } from './express-openid-connect.js';
import { forgejo } from './forgejo.js';
import { gitea } from './gitea.js';
import { grafana } from './grafana.js';
import { headscale } from './headscale.js';
import { homeAssistant } from './home-assistant.js';
import { immich } from './immich.js';
import { jellyfinLdap } from './jellyfin-ldap.js';
import { mikrotik } from './mikrotik.js';
import { openvpn } from './openvpn.js';
import { openwrt } from './openwrt.js';
import { pfsense } from './pfsense.js';
import { strongswan } from './strongswan.js';
import { unifiNetwork } from './unifi-network.js';
import { nextcloud } from './nextcloud.js';
import { nslcd } from './nslcd.js';
import { oidcClientTs } from './oidc-client-ts.js';
import { openWebui } from './open-webui.js';
import { outline } from './outline.js';
import { paperlessNgx } from './paperless-ngx.js';
import { passportOpenidClient } from './passport-openid-client.js';
import { portainer } from './portainer.js';
import { proxmoxVe } from './proxmox-ve.js';
import { roundcube } from './roundcube.js';
import { synapse } from './synapse.js';
import { synologyDsm } from './synology-dsm.js';
import { tailscale } from './tailscale.js';
import { uptimeKuma } from './uptime-kuma.js';
import { vaultwarden } from './vaultwarden.js';

export const PRESETS: readonly Preset[] = [
  audiobookshelf, forgejo, gitea, grafana, headscale, immich, synapse, nextcloud, openWebui, outline,
  paperlessNgx, portainer, proxmoxVe, synologyDsm, tailscale, vaultwarden,
  apacheModAuthOpenidc, djangoSocialAuth, expressOpenidConnect, authjs, passportOpenidClient, oidcClientTs,
  homeAssistant, uptimeKuma,
  jellyfinLdap, nslcd,
  roundcube, dovecot,
  unifiNetwork, openwrt, pfsense, openvpn, strongswan, mikrotik,
  samlGeneric, nextcloudSaml, zammad, snipeIt, bookstack, wikijs, awsIamIdentityCenter,
];

const byId = new Map(PRESETS.map((preset) => [preset.id, preset]));

export function findPreset(id: string): Preset | undefined {
  return byId.get(id);
}
