import { existsSync, readFileSync } from 'node:fs'
import { defineConfig, type DefaultTheme } from 'vitepress'

/** The API reference's sidebar, written by TypeDoc (`npm run docs:api`) beside its pages. */
const apiSidebarFile = new URL('../api/typedoc-sidebar.json', import.meta.url)
const apiSidebar: DefaultTheme.SidebarItem[] = existsSync(apiSidebarFile) ? JSON.parse(readFileSync(apiSidebarFile, 'utf8')) : []

const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Client',
    items: [
      { text: 'Client and options', link: '/client' },
      { text: 'Delivery guarantee and errors', link: '/delivery' },
      { text: 'Logging and secrets', link: '/logging' },
      { text: 'In the browser', link: '/browser' },
      { text: 'Runtimes', link: '/runtimes' },
      { text: 'Next.js', link: '/nextjs' },
      { text: 'Tracking plans', link: '/tracking-plans' },
    ],
  },
  {
    text: 'Collector',
    items: [
      { text: 'The collector', link: '/collector' },
      { text: 'Durable mode', link: '/durable' },
      { text: 'Console and admin API', link: '/console' },
      { text: 'Audiences and deletions', link: '/audiences-and-deletions' },
      { text: 'The CLI', link: '/cli' },
      { text: 'Security', link: '/security' },
    ],
  },
  {
    text: 'Webhooks',
    items: [
      { text: 'Receiving webhooks', link: '/receiving-webhooks' },
      { text: 'Sending webhooks', link: '/sending-webhooks' },
    ],
  },
  {
    text: 'More',
    items: [
      { text: 'Testing kit', link: '/testing' },
      { text: 'Performance', link: '/performance' },
      { text: 'FAQ', link: '/faq' },
      { text: 'Contributing', link: '/contributing' },
      { text: 'Changelog', link: '/changelog' },
      { text: 'API reference', link: '/api/' },
    ],
  },
]

export default defineConfig({
  title: 'isomorphic-analytics',
  description: 'Batched, retried analytics calls from any JavaScript runtime, and the collector, webhooks destination and test kit to run the whole system on one machine.',
  cleanUrls: true,
  lastUpdated: false,
  // The site is built from the repository: nothing is fetched at build or view time.
  head: [],
  srcExclude: ['**/README.md'],
  markdown: { theme: { light: 'github-light', dark: 'github-dark' } },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/client' },
      { text: 'Collector', link: '/collector' },
      { text: 'Webhooks', link: '/receiving-webhooks' },
      { text: 'API', link: '/api/' },
      { text: 'Changelog', link: '/changelog' },
    ],
    sidebar: { '/api/': [{ text: 'API reference', link: '/api/', items: apiSidebar }], '/': guide },
    search: { provider: 'local' },
    outline: { level: [2, 3] },
  },
})
