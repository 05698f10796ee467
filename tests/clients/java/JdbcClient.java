import java.sql.*;

/** Runs the statements given as arguments over JDBC and prints each result as tab-separated
 *  lines (getString), with a header of label:typeName; updates print "update=N". */
public class JdbcClient {
  public static void main(String[] args) throws Exception {
    String url = args[0];
    try (Connection c = DriverManager.getConnection(url)) {
      DatabaseMetaData md = c.getMetaData();
      System.out.println("product=" + md.getDatabaseProductName() + " " + md.getDatabaseProductVersion());
      for (int i = 1; i < args.length; i++) {
        String sql = args[i];
        if (sql.startsWith("tables:")) {
          ResultSet rs = md.getTables(sql.substring(7), null, "%", null);
          while (rs.next()) System.out.println("table=" + rs.getString("TABLE_NAME"));
          continue;
        }
        if (sql.startsWith("columns:")) {
          String[] p = sql.substring(8).split("\\.");
          ResultSet rs = md.getColumns(p[0], null, p[1], "%");
          while (rs.next()) System.out.println("column=" + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME"));
          continue;
        }
        if (sql.startsWith("describe:")) {  // the result's metadata before executing
          try (PreparedStatement p = c.prepareStatement(sql.substring(9))) {
            ResultSetMetaData m = p.getMetaData();
            StringBuilder h = new StringBuilder("described=");
            for (int j = 1; m != null && j <= m.getColumnCount(); j++) {
              if (j > 1) h.append('\t');
              h.append(m.getColumnLabel(j)).append(':').append(m.getColumnTypeName(j))
               .append('(').append(m.getPrecision(j)).append(',').append(m.getScale(j)).append(')');
            }
            System.out.println(h);
            p.setString(1, "it's");
            printResult(p.executeQuery());
          }
          continue;
        }
        if (sql.startsWith("prepared:")) {
          try (PreparedStatement p = c.prepareStatement(sql.substring(9))) {
            p.setString(1, "it's");
            p.setInt(2, 1);
            printResult(p.executeQuery());
          }
          continue;
        }
        try (Statement s = c.createStatement()) {
          if (s.execute(sql)) printResult(s.getResultSet());
          else System.out.println("update=" + s.getUpdateCount());
        }
      }
    }
  }

  static void printResult(ResultSet rs) throws SQLException {
    ResultSetMetaData m = rs.getMetaData();
    StringBuilder h = new StringBuilder();
    for (int i = 1; i <= m.getColumnCount(); i++) {
      if (i > 1) h.append('\t');
      h.append(m.getColumnLabel(i)).append(':').append(m.getColumnTypeName(i));
    }
    System.out.println(h);
    while (rs.next()) {
      StringBuilder r = new StringBuilder();
      for (int i = 1; i <= m.getColumnCount(); i++) {
        if (i > 1) r.append('\t');
        r.append(rs.getString(i));
      }
      System.out.println(r);
    }
  }
}
