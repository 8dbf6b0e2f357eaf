package packages

// loader holds the state of one Load call.
type loader struct {
	fs    *layout
	diags *diagnostics
}

// Load loads and validates the package folder dir as SPEC section 3 says: the manifest
// switchboard.yaml, every declared template (template.yaml, schema.json, the part files of
// each locale, sample.json rendered in every locale), the folder of each provider (provider.yaml
// and adapter script for http providers, optional for peer providers, refused for smtp ones),
// and every cross-reference between them. Every YAML mapping is closed and symbolic links are
// refused anywhere in the folder (the path naming the folder may go through links).
//
// On success the returned Package is complete and immutable, with its Digest set. Otherwise
// the error is a *LoadError holding every problem found, not only the first: package.unreadable
// for a file that could not be read (I/O), package.invalid and the finer codes otherwise.
func Load(dir string) (*Package, error) {
	diags := &diagnostics{}
	fs := openLayout(dir, diags)
	if fs == nil {
		return nil, &LoadError{Diagnostics: diags.List}
	}
	l := &loader{fs: fs, diags: diags}
	var mf *manifest
	if data, ok := fs.read(manifestFile, maxFileBytes, CodePackageInvalid); ok {
		y := &ydoc{path: manifestFile, code: CodePackageInvalid, diags: diags}
		if root := y.parse(data); root != nil {
			mf = parseManifest(y, root)
		}
	}
	if mf == nil {
		return nil, &LoadError{Diagnostics: diags.List}
	}

	pkg := &Package{Root: fs.root}
	for _, d := range mf.providers {
		l.loadProviderFolder(d.v)
		pkg.Providers = append(pkg.Providers, d.v)
	}
	l.undeclaredProviderFolders(mf)
	for _, d := range mf.templates {
		if t := l.loadTemplate(d); t != nil {
			pkg.Templates = append(pkg.Templates, t)
		}
	}
	l.undeclaredTemplateFolders(mf)
	checkReferences(mf)
	for _, d := range mf.senderProfiles {
		pkg.SenderProfiles = append(pkg.SenderProfiles, d.v)
	}
	for _, d := range mf.accessProfiles {
		pkg.AccessProfiles = append(pkg.AccessProfiles, d.v)
	}
	if !diags.empty() {
		return nil, &LoadError{Diagnostics: diags.List}
	}
	pkg.Digest = fs.digest()
	pkg.index()
	return pkg, nil
}

// undeclaredProviderFolders refuses providers/<id>/ folders of undeclared providers. Files
// directly under providers/ are outside the layout and ignored.
func (l *loader) undeclaredProviderFolders(mf *manifest) {
	if l.fs.entry("providers") != "dir" {
		return
	}
	for _, e := range l.fs.readDir("providers") {
		if e.IsDir() && !hidden(e.Name()) && !mf.ids["providers"][e.Name()] {
			l.diags.add(CodeProviderInvalid, "providers/"+e.Name(), 0, "",
				"provider %q is not declared in switchboard.yaml", e.Name())
		}
	}
}

// undeclaredTemplateFolders refuses template and version folders the manifest does not
// declare. Files at those levels are outside the layout and ignored.
func (l *loader) undeclaredTemplateFolders(mf *manifest) {
	if l.fs.entry("templates") != "dir" {
		return
	}
	for _, e := range l.fs.readDir("templates") {
		if !e.IsDir() || hidden(e.Name()) {
			continue
		}
		id := e.Name()
		if !mf.ids["templates"][id] {
			l.diags.add(CodePackageInvalid, "templates/"+id, 0, "", "template %q is not declared in switchboard.yaml", id)
			continue
		}
		for _, v := range l.fs.readDir("templates/" + id) {
			if v.IsDir() && !hidden(v.Name()) && !contains(mf.versions[id], v.Name()) {
				l.diags.add(CodePackageInvalid, "templates/"+id+"/"+v.Name(), 0, "",
					"version %q of template %q is not declared in switchboard.yaml", v.Name(), id)
			}
		}
	}
}

// index builds the lookup maps of a loaded package.
func (p *Package) index() {
	p.providers = map[string]*Provider{}
	for _, v := range p.Providers {
		p.providers[v.ID] = v
	}
	p.senderProfiles = map[string]*SenderProfile{}
	for _, v := range p.SenderProfiles {
		p.senderProfiles[v.ID] = v
	}
	p.templates = map[TemplateKey]*Template{}
	for _, v := range p.Templates {
		p.templates[TemplateKey{ID: v.ID, Version: v.Version}] = v
	}
	p.accessProfiles = map[string]*AccessProfile{}
	p.clients = map[string]*AccessProfile{}
	for _, v := range p.AccessProfiles {
		p.accessProfiles[v.ID] = v
		for _, c := range v.Clients {
			p.clients[c] = v
		}
	}
}
