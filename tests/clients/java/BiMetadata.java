import java.sql.*;

/** What BI tools (DBeaver, Metabase, Tableau-style JDBC clients) ask a server on connect and
 *  while browsing a schema: every DatabaseMetaData call prints "name => <rows>" with the first
 *  column values it returns, or "name => ERR <message>". Then each further argument is run as a
 *  statement and printed as "sql => <rows>" the same way. args: url db table view [sql...] */
public class BiMetadata {
  public static void main(String[] args) throws Exception {
    String url = args[0], db = args[1], table = args[2], view = args[3];
    try (Connection c = DriverManager.getConnection(url)) {
      DatabaseMetaData md = c.getMetaData();
      show("product", () -> one(md.getDatabaseProductName() + " " + md.getDatabaseProductVersion()
          + " " + md.getDatabaseMajorVersion() + "." + md.getDatabaseMinorVersion()));
      show("catalog", () -> one(c.getCatalog()));
      show("user", () -> one(md.getUserName()));
      show("quote", () -> one(md.getIdentifierQuoteString()));
      show("isolation", () -> one(String.valueOf(c.getTransactionIsolation())));
      show("readOnly", () -> one(String.valueOf(c.isReadOnly())));
      show("autoCommit", () -> one(String.valueOf(c.getAutoCommit())));
      show("valid", () -> one(String.valueOf(c.isValid(5))));
      show("keywords", () -> one(String.valueOf(md.getSQLKeywords().length() > 0)));
      show("catalogs", () -> rows(md.getCatalogs(), "TABLE_CAT"));
      show("schemas", () -> rows(md.getSchemas(), "TABLE_SCHEM"));
      show("tableTypes", () -> rows(md.getTableTypes(), "TABLE_TYPE"));
      show("tables", () -> rows(md.getTables(db, null, "%", null), "TABLE_NAME", "TABLE_TYPE", "REMARKS"));
      show("tablesTyped", () -> rows(md.getTables(db, null, "%", new String[] {"TABLE", "VIEW"}),
          "TABLE_NAME", "TABLE_TYPE"));
      show("views", () -> rows(md.getTables(db, null, "%", new String[] {"VIEW"}), "TABLE_NAME"));
      show("columns", () -> rows(md.getColumns(db, null, table, "%"), "COLUMN_NAME", "TYPE_NAME",
          "DATA_TYPE", "COLUMN_SIZE", "DECIMAL_DIGITS", "IS_NULLABLE", "REMARKS"));
      show("viewColumns", () -> rows(md.getColumns(db, null, view, "%"), "COLUMN_NAME", "TYPE_NAME",
          "DATA_TYPE", "COLUMN_SIZE", "DECIMAL_DIGITS"));
      show("primaryKeys", () -> rows(md.getPrimaryKeys(db, null, table), "COLUMN_NAME", "KEY_SEQ"));
      show("importedKeys", () -> rows(md.getImportedKeys(db, null, table), "FKCOLUMN_NAME"));
      show("exportedKeys", () -> rows(md.getExportedKeys(db, null, table), "FKCOLUMN_NAME"));
      show("crossReference", () -> rows(md.getCrossReference(db, null, table, db, null, view),
          "FKCOLUMN_NAME"));
      show("indexInfo", () -> rows(md.getIndexInfo(db, null, table, false, true), "INDEX_NAME",
          "COLUMN_NAME"));
      show("bestRow", () -> rows(md.getBestRowIdentifier(db, null, table, DatabaseMetaData.bestRowSession,
          true), "COLUMN_NAME"));
      show("versionColumns", () -> rows(md.getVersionColumns(db, null, table), "COLUMN_NAME"));
      show("procedures", () -> rows(md.getProcedures(db, null, "%"), "PROCEDURE_NAME"));
      show("procedureColumns", () -> rows(md.getProcedureColumns(db, null, "%", "%"), "COLUMN_NAME"));
      show("functions", () -> rows(md.getFunctions(db, null, "%"), "FUNCTION_NAME"));
      show("functionColumns", () -> rows(md.getFunctionColumns(db, null, "%", "%"), "COLUMN_NAME"));
      show("typeInfo", () -> count(md.getTypeInfo()));
      show("tablePrivileges", () -> count(md.getTablePrivileges(db, null, table)));
      show("columnPrivileges", () -> count(md.getColumnPrivileges(db, null, table, "%")));
      show("clientInfo", () -> count(md.getClientInfoProperties()));
      show("pseudoColumns", () -> count(md.getPseudoColumns(db, null, table, "%")));
      show("superTables", () -> count(md.getSuperTables(db, null, "%")));
      show("udts", () -> count(md.getUDTs(db, null, "%", null)));
      show("setCatalog", () -> { c.setCatalog(db); return one(c.getCatalog()); });
      show("setReadOnly", () -> { c.setReadOnly(true); c.setReadOnly(false); return one("ok"); });
      show("setIsolation", () -> {
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        return one(String.valueOf(c.getTransactionIsolation()));
      });
      for (int i = 4; i < args.length; i++) {
        String sql = args[i];
        show(sql, () -> {
          try (Statement s = c.createStatement()) {
            s.setMaxRows(50);
            if (!s.execute(sql)) return "update " + s.getUpdateCount();
            ResultSet rs = s.getResultSet();
            ResultSetMetaData m = rs.getMetaData();
            StringBuilder out = new StringBuilder();
            int n = 0;
            while (rs.next()) {
              n++;
              if (n <= 3) {
                for (int j = 1; j <= m.getColumnCount(); j++) out.append(j == 1 ? " [" : "|").append(rs.getString(j));
                out.append("]");
              }
            }
            return n + out.toString();
          }
        });
      }
    }
  }

  interface Call { String run() throws Exception; }

  static void show(String name, Call call) {
    try {
      System.out.println(name + " => " + call.run());
    } catch (Exception e) {
      System.out.println(name + " => ERR " + String.valueOf(e.getMessage()).replace('\n', ' '));
    }
  }

  static String one(String v) { return "1 [" + v + "]"; }

  static String count(ResultSet rs) throws SQLException {
    int n = 0;
    while (rs.next()) n++;
    return String.valueOf(n);
  }

  static String rows(ResultSet rs, String... cols) throws SQLException {
    StringBuilder out = new StringBuilder();
    int n = 0;
    while (rs.next()) {
      n++;
      out.append(" [");
      for (int j = 0; j < cols.length; j++) out.append(j == 0 ? "" : "|").append(rs.getString(cols[j]));
      out.append("]");
    }
    return n + out.toString();
  }
}
